"""Graders imported from promptfoo, exported to Inspect, score there as in the studio, samples
without an output included (issue 26): the exported scorer reads no output as empty text, and an
empty value to compare with is an error on both sides (promptfoo's rule)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance_samples import compare, pairs
from platforms_env import VENV_PYTHON, needs_module, run_json
from test_promptfoo import ASSERTS

from studio.core.graders.builtin import score_sample
from studio.core.models import Sample
from studio.core.platforms import get_platform

SIDE = Path(__file__).parent / "platform_side" / "python_targets_side.py"


def cases() -> list[tuple[str | None, str | None]]:
    """A slice of the tricky pairs, then samples with no output at all (completion None)."""
    return pairs()[:60] + [(None, "Paris"), (None, ""), (None, None), (None, "42"), ("Paris", None)]


def studio(grader: Any, answer: str | None, expected: str | None) -> Any:
    outcome = score_sample(grader, Sample(id="s", completion=answer, expected=expected))
    return "error" if outcome.status == "error" else outcome.score


def test_promptfoo_imports_exported_to_inspect_score_as_the_studio(tmp_path: Path) -> None:
    needs_module("inspect_ai")
    promptfoo, inspect = get_platform("promptfoo"), get_platform("inspect")
    jobs, expected, labels = [], [], []
    for n, item in enumerate(ASSERTS):
        grader = promptfoo.from_assert(dict(item), f"pf{n}", tmp_path)
        if not inspect.can_export(grader).ok:
            continue
        files = inspect.export(grader).files
        base = tmp_path / f"pf{n}"
        base.mkdir()
        for rel, text in files.items():
            (base / rel).write_text(text, encoding="utf-8")
        if "async def _score(" not in next(iter(files.values())):
            continue  # Inspect's own scorer (tests/conformance/test_inspect.py compares those)
        jobs.append({"target": "inspect", "dir": str(base), "file": next(iter(files)),
                     "calls": [{"answer": a, "expected": e, "question": "", "row": {}} for a, e in cases()]})
        expected.append([studio(grader, a, e) for a, e in cases()])
        labels.append(str(item))
    assert len(jobs) >= 10, "most promptfoo built-ins export to Inspect"
    out = run_json([str(VENV_PYTHON), str(SIDE)], {"jobs": jobs})
    bad: list[str] = []
    for label, mine, theirs in zip(labels, expected, out["scores"], strict=True):
        theirs = ["error" if isinstance(t, str) else t for t in theirs]
        bad += compare("inspect", mine, theirs, [f"{label} {a!r} vs {e!r}" for a, e in cases()])
    assert not bad, "\n".join(bad[:30])
