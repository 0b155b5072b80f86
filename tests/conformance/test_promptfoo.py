"""promptfoo: an imported assertion scores every tricky pair as promptfoo's own ``runAssertions``.

Each assertion is imported with the studio's promptfoo importer, scored by the built-in scorer, and
run by promptfoo itself under node (platform_side/promptfoo_side.mjs) with ``vars.expected``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conformance_samples import TEXTS, compare, pairs
from platforms_env import NPM_MODULES, needs_promptfoo, run_json

from studio.core.graders.builtin import score_sample
from studio.core.models import Outcome, Sample
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "promptfoo_side.mjs"
E = "{{expected}}"
ASSERTS: list[dict[str, Any]] = [
    {"type": "equals", "value": E}, {"type": "not-equals", "value": E}, {"type": "equals", "value": "Paris"},
    {"type": "contains", "value": E}, {"type": "not-contains", "value": E}, {"type": "icontains", "value": E},
    {"type": "not-icontains", "value": E}, {"type": "contains", "value": "  Paris"},
    {"type": "starts-with", "value": E}, {"type": "not-starts-with", "value": E}, {"type": "starts-with", "value": " "},
    {"type": "contains-any", "value": ["Paris", "42", "\u00df"]}, {"type": "icontains-any", "value": "paris, 42 ,\"a,b\""},
    {"type": "contains-all", "value": "Paris,  is"}, {"type": "icontains-all", "value": ["PARIS", "\u0130"]},
    {"type": "not-contains-any", "value": ["1", "2"]},
    {"type": "regex", "value": E}, {"type": "not-regex", "value": E}, {"type": "regex", "value": r"\d+"},
    {"type": "regex", "value": r"^\w+$"}, {"type": "regex", "value": r"\bParis\b"}, {"type": "regex", "value": r"^\s*Paris"},
    {"type": "regex", "value": r"Paris$"}, {"type": "regex", "value": r"^.+$"}, {"type": "regex", "value": "(?i)paris"},
    {"type": "regex", "value": r"\S+\s\S+"}, {"type": "regex", "value": r"(?<w>a)\k<w>"},
    {"type": "is-json"}, {"type": "not-is-json"},
    # an empty value: promptfoo's invariant fails the test with an error (issue 26)
    {"type": "contains", "value": ""}, {"type": "icontains", "value": ""}, {"type": "starts-with", "value": ""},
    {"type": "not-contains", "value": ""}, {"type": "regex", "value": ""}, {"type": "not-starts-with", "value": ""},
]


def scored(outcome: Outcome) -> float | str:
    """A studio outcome as the promptfoo side reports it: the score, or "error"."""
    return "error" if outcome.status == "error" else float(outcome.score or 0.0)


@pytest.fixture(scope="module")
def promptfoo_run() -> dict[str, Any]:
    needs_promptfoo()
    index = NPM_MODULES / "promptfoo" / "dist" / "src" / "index.js"
    node = shutil.which("node")
    assert node
    out = run_json([node, str(SIDE)], {"index": str(index), "asserts": ASSERTS, "pairs": pairs()}, cwd=SIDE.parent)
    return out


def test_imported_assertions_score_as_promptfoo(promptfoo_run: dict[str, Any], tmp_path: Path) -> None:
    platform = get_platform("promptfoo")
    bad: list[str] = []
    for n, (item, theirs) in enumerate(zip(ASSERTS, promptfoo_run["scores"], strict=True)):
        grader = platform.from_assert(dict(item), f"a{n}", tmp_path)
        mine = [scored(score_sample(grader, Sample(id="s", completion=o, expected=e))) for o, e in pairs()]
        bad += compare("promptfoo", mine, [t if t == "error" else float(t) for t in theirs],
                       [f"{item} {o!r} {e!r}" for o, e in pairs()])
    assert not bad, "\n".join(bad[:40])


def test_missing_expected_scores_as_promptfoo(tmp_path: Path) -> None:
    """A sample without an expected answer: promptfoo renders {{expected}} as empty text (an error for
    contains/starts-with/regex, a comparison with "" for equals); the studio's imports do the same."""
    needs_promptfoo()
    node = shutil.which("node")
    assert node
    missing = [(t, None) for t in TEXTS]
    index = NPM_MODULES / "promptfoo" / "dist" / "src" / "index.js"
    out = run_json([node, str(SIDE)], {"index": str(index), "asserts": ASSERTS, "pairs": missing}, cwd=SIDE.parent)
    platform = get_platform("promptfoo")
    bad: list[str] = []
    for n, (item, theirs) in enumerate(zip(ASSERTS, out["scores"], strict=True)):
        grader = platform.from_assert(dict(item), f"m{n}", tmp_path)
        mine = [scored(score_sample(grader, Sample(id="s", completion=o, expected=None))) for o, _ in missing]
        bad += compare("promptfoo", mine, [t if t == "error" else float(t) for t in theirs],
                       [f"{item} {o!r} without expected" for o, _ in missing])
    assert not bad, "\n".join(bad[:40])
