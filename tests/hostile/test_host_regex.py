"""Regular expressions from graders and samples never run unbounded on the host (studio.core.saferegex).

``^(a+)+$`` on ``"a" * 34 + "!"`` backtracks for minutes in Python's ``re``: every place that matches
a user's or a sample's pattern in the host process (built-in regex_match and regex_extract, the
pattern extractor, a letter judge's grade_pattern) must answer, and the sample must say why. The
differential check keeps the fast RE2 path honest: same answers as ``re`` wherever it is used.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from studio.core import saferegex
from studio.core.graders.builtin import score_sample
from studio.core.models import BuiltinGrader, BuiltinOptions, Extractor, Sample, Turn

EVIL = r"^(a+)+$"
EVIL_TEXT = "a" * 34 + "!"
#: the same attack on text RE2 cannot read as ``re`` does (not ASCII): only the deadline can stop it
EVIL_UNICODE = "a" * 34 + "é"


def _sample(completion: str, expected: str | None = None) -> Sample:
    return Sample(id="s", messages=[Turn(role="user", content="q"), Turn(role="assistant", content=completion)],
                  expected=expected)


@pytest.mark.parametrize("where", ["grader", "sample", "javascript", "extract", "extractor"])
def test_catastrophic_patterns_answer_in_linear_time(where: str) -> None:
    """On ASCII text the attack meets RE2 and gets ``re``'s answer (no match) at once."""
    options = {"extract": {"pattern": EVIL}, "sample": {}, "javascript": {"reference": EVIL,
               "regex_dialect": "javascript"}}.get(where, {"reference": EVIL})
    function = "regex_extract" if where == "extract" else "regex_match"
    extractor = Extractor(kind="pattern", config={"pattern": EVIL}) if where == "extractor" else None
    grader = BuiltinGrader(key="r", function=function, options=BuiltinOptions(**options), extractor=extractor)
    outcome = score_sample(grader, _sample(EVIL_TEXT, expected=EVIL if where == "sample" else "x"))
    assert outcome.error is None and outcome.score == 0.0, outcome


@pytest.mark.parametrize("where", ["grader", "sample", "javascript", "extract", "extractor"])
def test_catastrophic_patterns_end_with_a_clear_error(where: str) -> None:
    EVIL_TEXT = EVIL_UNICODE  # noqa: N806 - the attack where only the host's deadline can stop it
    if where == "grader":
        grader = BuiltinGrader(key="r", function="regex_match", options=BuiltinOptions(reference=EVIL))
        sample = _sample(EVIL_TEXT)
    elif where == "sample":  # the pattern is the sample's expected answer
        grader = BuiltinGrader(key="r", function="regex_match")
        sample = _sample(EVIL_TEXT, expected=EVIL)
    elif where == "javascript":
        grader = BuiltinGrader(key="r", function="regex_match",
                               options=BuiltinOptions(reference=EVIL, regex_dialect="javascript"))
        sample = _sample(EVIL_TEXT)
    elif where == "extract":
        grader = BuiltinGrader(key="r", function="regex_extract", options=BuiltinOptions(pattern=EVIL))
        sample = _sample(EVIL_TEXT, expected="x")
    else:
        grader = BuiltinGrader(key="r", function="exact_match",
                               extractor=Extractor(kind="pattern", config={"pattern": EVIL}))
        sample = _sample(EVIL_TEXT, expected="x")
    outcome = score_sample(grader, sample)
    assert outcome.error is not None and "catastrophic backtracking" in outcome.error, outcome
    assert outcome.score is None
    # the helper was replaced: the next sample is graded normally
    ok = score_sample(BuiltinGrader(key="r", function="regex_match", options=BuiltinOptions(reference=r"(a)\1")),
                      _sample("xaa"))
    assert ok.score == 1.0


def test_a_run_with_a_catastrophic_sample_finishes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "redos.jsonl"
    rows = [{"id": "evil", "input": "q", "completion": EVIL_UNICODE, "expected": EVIL},
            {"id": "fine", "input": "q", "completion": "abc", "expected": "b+"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli("datasets", "import", str(data), "--name", "redos").returncode == 0
    grader = tmp_path / "rx.grader.yaml"
    grader.write_text("kind: builtin\nkey: rx\nfunction: regex_match\nmetric: {key: rx, kind: bool}\n")
    assert cli("graders", "create", str(grader)).returncode == 0
    result = cli("run", "rx", "redos", "--json")
    run = json.loads(result.stdout)
    shown = json.loads(cli("runs", "show", str(run["id"]), "--json").stdout)["results"]
    by_id = {r["sample_id"]: r for r in shown}
    assert by_id["evil"]["status"] == "error" and "catastrophic backtracking" in by_id["evil"]["error"]
    assert by_id["fine"]["score"] == 1.0


def test_a_letter_judge_grade_pattern_is_bounded() -> None:
    from studio.core.judges.kinds.letter_judge import read_grade
    from studio.core.models import LetterJudge

    judge = LetterJudge(key="l", grade_pattern=r"GRADE: (\w)|^(a+)+$", template="{answer}")
    assert read_grade(judge, "GRADE: C") == "C"
    with pytest.raises(saferegex.RegexTimeout):
        read_grade(judge, EVIL_UNICODE)


def test_invalid_patterns_are_still_re_errors() -> None:
    with pytest.raises(re.error):
        saferegex.search("(", "x")
    found = saferegex.search(r"(?P<word>\w+)-(\d)", "ab-1")
    assert found is not None and found.group("word") == "ab" and found.groups() == ("ab", "1")
    with pytest.raises(IndexError):
        found.group("missing")


ATOMS = ["a", "b", "ab", ".", r"\d", r"\w", r"\s", r"\b", "[a-c]", "[^a]", "x", "^", "$", r"\Z", r"\.", "é",
         "[:=x]", "a{,2}", r"\u0061"]
QUANTIFIERS = ["", "", "*", "+", "?", "{1,2}", "*?", "+?"]


def _pattern(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        atom = rng.choice(ATOMS)
        if atom not in ("^", "$", r"\Z", r"\b") and rng.random() < 0.3:
            atom = f"({atom}|{rng.choice(ATOMS[:8])})"
        parts.append(atom + (rng.choice(QUANTIFIERS) if atom not in ("^", "$", r"\Z", r"\b") else ""))
    return "".join(parts)


def test_the_fast_path_answers_as_python_re() -> None:
    rng = random.Random(20)
    alphabet = "aabbx1 .\n\t\x0bé_-"
    for _ in range(3000):
        pattern = _pattern(rng)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        flags = rng.choice([0, re.IGNORECASE, re.ASCII])
        try:
            want = re.search(pattern, text, flags)
        except re.error:  # the same refusal, never another answer
            with pytest.raises(re.error):
                saferegex.matches(pattern, text, flags)
            continue
        assert saferegex.matches(pattern, text, flags) == (want is not None), (pattern, text, flags)
        got = saferegex.search(pattern, text, flags)
        assert (got is None) == (want is None), (pattern, text, flags)
        if want is not None and got is not None:
            assert got.group(0) == want.group(0) and got.groups() == want.groups(), (pattern, text, flags)


def test_the_fast_path_is_used_for_plain_text() -> None:
    """The linear engine takes the common case (no helper round trip): ASCII text without newlines."""
    if saferegex._re2() is None:
        pytest.fail("google-re2 is a dependency of the studio: pip install -e .")
    assert saferegex._re2_for(r"^\d+(\.\d+)?$", 0, "12.5") is not None
    assert saferegex._re2_for(r"\b(?:total|answer)\s*[:=]\s*(\d+)", 0, "answer: 12") is not None
    assert saferegex._re2_for(EVIL, 0, EVIL_TEXT) is not None  # the attack itself runs in linear time
    assert not saferegex.matches(EVIL, EVIL_TEXT)
    assert saferegex._re2_for(r"(a)\1", 0, "aa") is None  # a backreference: the bounded helper
    assert saferegex._re2_for(r"\w+", 0, "héllo") is None  # Unicode text: the bounded helper


def test_a_helper_mid_match_does_not_outlive_a_killed_studio(tmp_path: Path) -> None:
    """The studio killed while its helper backtracks (before its own deadline kills the helper): the
    helper ends by itself (SIGALRM's default action a few seconds later), not minutes later."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    script = ("import os, sys\nfrom studio.core import saferegex\n"
              "h = saferegex._helper()\n"
              "import threading\n"
              "t = threading.Thread(target=lambda: saferegex.matches(r'^(a+)+$', 'a' * 40 + 'é'), daemon=True)\n"
              "t.start()\n"
              "import time\n"
              "while h._process is None: time.sleep(0.01)\n"
              "print(h._process.pid, flush=True)\n"
              "time.sleep(600)\n")
    studio = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert studio.stdout is not None
    helper = int(studio.stdout.readline())
    time.sleep(0.5)  # the helper is backtracking now
    os.kill(studio.pid, signal.SIGKILL)
    studio.wait()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            with open(f"/proc/{helper}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.2)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the regex helper outlived the studio by a minute")
