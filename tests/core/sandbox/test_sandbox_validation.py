"""The validation checks: names, order, stop at the first failure, lines, and the contract guess."""

from __future__ import annotations

import pytest

from studio.core.sandbox import detect_contract, validate
from studio.core.sandbox.pool import WorkerPool

GOOD = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    return 1.0 if thread.completion() == "4" else 0.0
"""


def statuses(checks) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.name: c.status for c in checks}


def test_a_good_adaptive_grader_passes_every_check_in_order(sandbox_pool: WorkerPool) -> None:
    checks = validate(GOOD, "adaptive", pool=sandbox_pool)
    assert [c.name for c in checks] == ["size", "syntax", "structure", "signature", "execution", "test run"]
    assert all(c.status == "passed" for c in checks), checks
    assert "returned 1" in checks[-1].message


@pytest.mark.parametrize(
    ("source", "failed", "line", "words"),
    [
        ("async def grade(thread)\n    return 1.0\n", "syntax", 1, "expected ':'"),
        ("def grade(thread):\n    return 1.0\n", "structure", None, "must be async"),
        ("def outer():\n    async def grade(t):\n        return 1.0\n", "structure", None, "nested"),
        ("async def grade(a, b):\n    return 1.0\n", "signature", 1, "2 parameter"),
        ("import numpy\nasync def grade(t):\n    return 1.0\n", "execution", 1, "No module named 'numpy'"),
        ("async def grade(t):\n    return 'high'\n", "test run", None, "str instead of a number"),
        ("async def grade(t):\n    x = {}\n    return x['missing']\n", "test run", 3, "KeyError"),
    ],
)
def test_adaptive_checks_stop_at_the_first_failure(
    sandbox_pool: WorkerPool, source: str, failed: str, line: int | None, words: str
) -> None:
    checks = validate(source, "adaptive", pool=sandbox_pool)
    by_name = {c.name: c for c in checks}
    assert by_name[failed].status == "failed"
    assert words in by_name[failed].message
    assert by_name[failed].line == line
    names = [c.name for c in checks]
    assert all(c.status == "skipped" for c in checks[names.index(failed) + 1 :])


def test_missing_annotations_are_warnings_not_failures(sandbox_pool: WorkerPool) -> None:
    checks = validate("async def grade(thread):\n    return 0.5\n", "adaptive", pool=sandbox_pool)
    signature = statuses(checks)
    assert signature["signature"] == "warning" and signature["test run"] == "passed"
    message = next(c.message for c in checks if c.name == "signature")
    assert "StringThread" in message and "float" in message


def test_the_64_kib_limit() -> None:
    checks = validate(GOOD + "#" * 70000, "adaptive")
    assert checks[0].name == "size" and checks[0].status == "failed"
    assert all(c.status == "skipped" for c in checks[1:])


def test_a_module_body_that_never_ends_is_stopped(sandbox_pool: WorkerPool) -> None:
    checks = validate("while True:\n    pass\nasync def grade(t):\n    return 1.0\n", "adaptive", timeout_seconds=1, pool=sandbox_pool)
    execution = next(c for c in checks if c.name == "execution")
    assert execution.status == "failed" and "wall-time limit" in execution.message


@pytest.mark.parametrize(
    ("contract", "source"),
    [
        ("mka1_sample", "def grade(sample, item):\n    return 1.0 if sample['output_text'] == item['target'] else 0.0\n"),
        ("mka1_sample", "def grade(sample, item, ctx):\n    return {'scores': {'em': 1.0}}\n"),
        ("mka1_batch", "def grade_batch(samples):\n    return {'metrics': {'n': len(samples)}}\n"),
        ("letta", "from letta_evals.decorators import grader\nfrom letta_evals.models import GradeResult\n@grader\ndef g(sample, submission):\n    return GradeResult(score=1.0, rationale='ok')\n"),
        ("promptfoo", "def get_assert(output, context):\n    return {'pass': output == '4', 'score': 1.0, 'reason': 'ok'}\n"),
    ],
)
def test_other_contracts_pass_their_checks(sandbox_pool: WorkerPool, contract: str, source: str) -> None:
    checks = validate(source, contract, pool=sandbox_pool)  # type: ignore[arg-type]
    assert all(c.status == "passed" for c in checks), checks


def test_other_contracts_fail_on_the_wrong_entry_point(sandbox_pool: WorkerPool) -> None:
    assert statuses(validate("def grade(sample):\n    return 1\n", "mka1_sample", pool=sandbox_pool))["signature"] == "failed"
    assert statuses(validate("def grade(s, i):\n    return 1\n", "mka1_batch", pool=sandbox_pool))["structure"] == "failed"
    assert statuses(validate("def f(s, x):\n    return 1\n", "letta", pool=sandbox_pool))["structure"] == "failed"
    assert statuses(validate("def get_assert(o, c):\n    return 'yes'\n", "promptfoo", pool=sandbox_pool))["test run"] == "failed"


def test_detect_contract() -> None:
    assert detect_contract(GOOD) == "adaptive"
    assert detect_contract("def grade(sample, item):\n    return 1\n") == "mka1_sample"
    assert detect_contract("def grade(sample, item, ctx):\n    return 1\n") == "mka1_sample"
    assert detect_contract("def grade_batch(samples):\n    return {}\n") == "mka1_batch"
    assert detect_contract("from letta_evals.decorators import grader\n@grader\ndef f(s, x):\n    return 1\n") == "letta"
    assert detect_contract("def get_assert(output, context):\n    return True\n") == "promptfoo"
    assert detect_contract("x = 1\n") is None
    assert detect_contract("def (:\n") is None


def test_an_async_two_parameter_grade_is_refused_naming_the_contract(sandbox_pool: WorkerPool) -> None:
    """No platform awaits grade(sample, item): MKA1 and OpenAI call it synchronously (issue 12)."""
    source = "async def grade(sample, item):\n    return 1.0\n"
    checks = validate(source, detect_contract(source) or "mka1_sample", pool=sandbox_pool)
    structure = next(c for c in checks if c.name == "structure")
    assert structure.status == "failed"
    assert "synchronously" in structure.message and "async def grade(thread)" in structure.message
    batch = validate("async def grade_batch(samples):\n    return {}\n", "mka1_batch", pool=sandbox_pool)
    assert statuses(batch)["structure"] == "failed"
    # promptfoo's Python wrapper awaits a coroutine function (asyncio.run): an async get_assert is fine
    promptfoo = validate("async def get_assert(output, context):\n    return True\n", "promptfoo", pool=sandbox_pool)
    assert statuses(promptfoo)["structure"] == "passed"
