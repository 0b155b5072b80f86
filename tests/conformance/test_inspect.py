"""Inspect: a task file's match(), includes(), pattern(), exact() and f1() scorers, imported by the
studio from the file's syntax tree, score every tricky pair as inspect-ai's own scorers do on a real
TaskState (platform_side/inspect_side.py), sample by sample."""

from __future__ import annotations

import random
from pathlib import Path

from conformance_samples import TEXTS, compare, pairs
from platforms_env import VENV_PYTHON, needs_module, run_json

from studio.core.graders.builtin import score_sample
from studio.core.models import Sample
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "inspect_side.py"
# (call as written in a task file, the same scorer's keyword arguments for inspect_side.py)
CALLS: list[tuple[str, str, dict]] = [
    ("includes()", "includes", {}),
    ("includes(ignore_case=False)", "includes", {"ignore_case": False}),
    ("includes(True)", "includes", {"ignore_case": True}),
    ("match()", "match", {}),
    ("match('begin')", "match", {"location": "begin"}),
    ("match(location='any')", "match", {"location": "any"}),
    ("match('exact')", "match", {"location": "exact"}),
    ("match('end', ignore_case=False)", "match", {"location": "end", "ignore_case": False}),
    ("match(numeric=True)", "match", {"numeric": True}),
    ("match('begin', numeric=True)", "match", {"location": "begin", "numeric": True}),
    ("match('any', numeric=True)", "match", {"location": "any", "numeric": True}),
    ("match('exact', numeric=True, ignore_case=False)", "match",
     {"location": "exact", "numeric": True, "ignore_case": False}),
    ("pattern(r'ANSWER:\\s*(\\w+)')", "pattern", {"pattern": r"ANSWER:\s*(\w+)"}),
    ("pattern(r'(\\d+)', ignore_case=False)", "pattern", {"pattern": r"(\d+)", "ignore_case": False}),
    ("pattern('paris')", "pattern", {"pattern": "paris"}),
    ("pattern(r'(\\w+)\\W+(\\w+)', match_all=True)", "pattern", {"pattern": r"(\w+)\W+(\w+)", "match_all": True}),
    ("pattern(r'(\\w+)\\W+(\\w+)')", "pattern", {"pattern": r"(\w+)\W+(\w+)"}),
    ("pattern(r'(x)?(.*)', True, True)", "pattern", {"pattern": r"(x)?(.*)", "ignore_case": True, "match_all": True}),
    ("exact()", "exact", {}),
    ("f1()", "f1", {}),
    ("f1(stop_words=['paris', 'The'])", "f1", {"stop_words": ["paris", "The"]}),
]
# numbers as Inspect reads them: scripts, signs, grouping, fractions, exponents, CJK numerals, money
NUMBERS = [
    "42", "42.0", "(42)", "42!", "<42", "$1,000", "1,000", "1.000,5", "1 000", "\\$20", "20", "**7**", "7",
    "\u00bd", "0.5", "2\u00bd", "2.5", "3\u00b2", "9", "1.5\u207b\u00b3", "\u2212\u00bd", "-0.5", "\u5341\u4e8c",
    "12", "\u4e8c\u3007\u4e8c\u4e94", "2025", "\u4e09\u70b9\u4e94", "3.5", "\u8d1f\u4e94", "-5", "\u2166", "7.",
    "60%", "60", "1e999", "inf", "nan", "1e3", "1000.0", "x 12 y 13", "13 apples and 12", "12 then 13.",
    "\uff11\uff12", "\u0661\u0662", "12,5", "12.5", "1_000", "3.14159", "3.1416", "The answer is 12.",
]

# pairs the pattern() calls above extract something from (one or both groups equal to the target)
PATTERN_PAIRS = [
    ("ANSWER: 42\nmore", "42"), ("answer:paris", "Paris"), ("ANSWER:  Stra\u00dfe", "STRASSE"),
    ("Paris, Paris", "paris"), ("Paris, Lyon", "paris"), ("Lyon Paris", "Paris"), ("x", "x"), ("xx", "x"),
    ("x", ""), ("", ""), ("", "x"), ("12 and 12", "12"), ("\u0661\u0662", "\u0661\u0662"), ("ANSWER: ", ""),
    ("PARIS", "paris"), ("\u0130stanbul", "i\u0307stanbul"), ("ANSWER: \u0130", "i\u0307"),
]


def all_pairs() -> list[tuple[str, str]]:
    rng = random.Random(1212)
    found = pairs()
    found += [(n, n) for n in NUMBERS]
    found += [(rng.choice(NUMBERS), rng.choice(NUMBERS)) for _ in range(250)]
    found += [(rng.choice(NUMBERS + TEXTS), rng.choice(NUMBERS)) for _ in range(100)]
    found += PATTERN_PAIRS
    return found


def test_imported_scorers_score_as_inspect(tmp_path: Path) -> None:
    needs_module("inspect_ai")
    task = tmp_path / "task.py"
    task.write_text("from inspect_ai.scorer import exact, f1, includes, match, pattern\n"
                    + "".join(f"S{n} = {call}\n" for n, (call, _, _) in enumerate(CALLS)), encoding="utf-8")
    result = get_platform("inspect").import_(task)
    assert not result.warnings, result.warnings
    graders = result.graders
    assert len(graders) == len(CALLS)
    data = all_pairs()
    out = run_json([str(VENV_PYTHON), str(SIDE)],
                   {"scorers": [{"name": name, "kwargs": kwargs} for _, name, kwargs in CALLS], "pairs": data})
    bad: list[str] = []
    for (call, _, _), grader, theirs in zip(CALLS, graders, out["scores"], strict=True):
        mine = [score_sample(grader, Sample(id="s", completion=o, expected=t)).score for o, t in data]
        bad += compare("inspect", mine, theirs, [f"{call} {o!r} {t!r}" for o, t in data])
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])
