"""Judges of one suite that share an endpoint share its concurrency limit (issue 25, part 2).

The scripted server counts the requests it holds at once: a suite of two judges on one endpoint
with ``max_concurrency`` N must keep N calls in flight (the limit is the endpoint's, so both judges
together fill it) and never more than N (not N per judge).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_helpers import add_endpoint, qa

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BinaryJudge, RangeJudge
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.run_graders import grader_results

LIMIT = 6
SAMPLES = 60


@pytest.fixture
def slow_judge() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer(latency_ms=20).start()
    yield server
    server.stop()


@pytest.fixture
def lib(library: Library, slow_judge: FakeJudgeServer) -> Library:
    add_endpoint(library, slow_judge, max_concurrency=LIMIT)
    library.datasets.create("qa", [qa(f"s{i}", f"Question {i}?", f"Answer {i}") for i in range(SAMPLES)])
    library.graders.create(BinaryJudge(key="right", criteria="Is it right?", endpoint="fake"))
    library.graders.create(RangeJudge(key="quality", criteria="How good?", endpoint="fake"))
    library.suites.create(SuiteDefinition(key="both", overall="mean", graders=[
        SuiteMember(grader="right"), SuiteMember(grader="quality")]))
    return library


def _every_judge_graded_every_sample(lib: Library, run_id: int) -> None:
    for key in ("right", "quality"):
        rows = grader_results(lib, run_id, key)
        assert len(rows) == SAMPLES and all(r["status"] == "ok" for r in rows), key


def test_two_judges_of_a_suite_fill_the_endpoint_limit_and_never_pass_it(
    lib: Library, slow_judge: FakeJudgeServer
) -> None:
    run = run_grader(lib, "both", "qa", RunOptions(use_cache=False))
    assert run.status == "completed" and run.done == SAMPLES
    _every_judge_graded_every_sample(lib, run.id)
    # one call a sample for the binary judge, two for the range judge
    assert slow_judge.requests["/v1/chat/completions"] >= 3 * SAMPLES
    assert slow_judge.max_in_flight == LIMIT  # the endpoint's limit, not twice it (one per judge)


def test_a_larger_run_concurrency_stays_within_the_shared_limit(
    lib: Library, slow_judge: FakeJudgeServer
) -> None:
    run = run_grader(lib, "both", "qa", RunOptions(concurrency=64, use_cache=False))
    assert run.status == "completed"
    _every_judge_graded_every_sample(lib, run.id)
    assert slow_judge.max_in_flight == LIMIT


def test_a_smaller_run_concurrency_bounds_both_judges_together(
    lib: Library, slow_judge: FakeJudgeServer
) -> None:
    run = run_grader(lib, "both", "qa", RunOptions(concurrency=3, use_cache=False))
    assert run.status == "completed"
    _every_judge_graded_every_sample(lib, run.id)
    assert slow_judge.max_in_flight == 3
