"""A run is one request (issue 32): ``RunRequest`` says what to grade, on what, with which thresholds,
caps, reports and executor; the engine refuses a bad one before any run exists, starts a good one
with exactly its settings, and moves a resumed one to the caps asked."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from studio.core.engine.request import Reports, RequestRefused, RunRequest
from studio.core.engine.verdict import ThresholdError
from studio.core.models import BuiltinGrader, Sample, Turn
from studio.core.store import Library


@pytest.fixture
def ready(library: Library) -> Library:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.datasets.create("qa", [Sample(id=f"q{i}", messages=[Turn(role="user", content="hi")],
                                          completion="a", expected="a") for i in range(3)])
    return library


@pytest.mark.parametrize(("request_", "sentence"), [
    (RunRequest(grader="exact"), "run needs GRADER (or a suite) and DATASET"),
    (RunRequest(resume=1, grader="exact"), "--resume takes a run id alone"),
    (RunRequest(graders=["exact"], grader="exact", dataset="qa"), "takes DATASET alone"),
    (RunRequest(graders=["exact"]), "run --graders a,b,c needs DATASET"),
    (RunRequest(grader="exact", dataset="qa", overall="mean"), "--overall goes with --graders"),
])
def test_a_request_of_the_wrong_shape_is_refused_in_one_sentence(ready: Library, request_: RunRequest,
                                                                  sentence: str) -> None:
    with pytest.raises(RequestRefused, match=re.escape(sentence)) as refused:
        request_.check(ready)
    assert refused.value.exit_code == 2
    assert ready.runs.list() == []


def test_thresholds_and_report_paths_are_checked_before_a_run_exists(ready: Library, tmp_path: Path) -> None:
    with pytest.raises(ThresholdError, match="'nope'"):
        RunRequest(grader="exact", dataset="qa", fail_under=["nope=0.5"]).start(ready)
    with pytest.raises(RequestRefused, match="--baseline"):
        RunRequest(grader="exact", dataset="qa", reports=Reports(baseline=99)).start(ready)
    missing = tmp_path / "no-such-folder" / "junit.xml"
    with pytest.raises(Exception, match="does not exist"):
        RunRequest(grader="exact", dataset="qa", reports=Reports(junit=missing)).start(ready)
    assert ready.runs.list() == []


def test_a_started_run_holds_the_request_and_a_resume_moves_its_caps(ready: Library) -> None:
    request = RunRequest(grader="exact", dataset="qa", limit=2, pass_threshold=0.75, keep_going=True)
    info = request.start(ready)
    assert info.total == 2 and info.pass_threshold == 0.75 and info.settings["keep_going"] is True
    assert info.settings == request.options().model_dump(mode="json", exclude_none=True)
    moved = RunRequest(resume=info.id, max_tokens=10, max_cost=Decimal("0.5")).start(ready)
    assert moved.settings["max_tokens"] == 10 and moved.settings["max_cost"] == "0.5"
    assert moved.pass_threshold == 0.75  # a resume keeps the run's own threshold


def test_what_needs_no_library_is_refused_before_the_library_is_read(ready: Library, tmp_path: Path) -> None:
    """A bad ``--fail-under`` or report path is said first, whatever the library would answer: the
    grader and dataset named here do not exist (before, the library was read first and said so,
    and the mistake in the options came out only on the next try)."""
    nowhere = dict(grader="nobody", dataset="nothing")
    with pytest.raises(ThresholdError, match="takes a score"):
        RunRequest(**nowhere, fail_under=["nobody=high"]).check(ready)
    for option in ("junit", "markdown"):
        missing = tmp_path / "no-such-folder" / "report"
        with pytest.raises(Exception, match=f"--{option} .*does not exist"):
            RunRequest(**nowhere, reports=Reports(**{option: missing})).check(ready)
    with pytest.raises(Exception, match="no grader or suite with key 'nobody'"):  # the library's turn after
        RunRequest(**nowhere, fail_under=["0.5"]).check(ready)


def test_the_check_answers_the_graders_it_read_with_their_definitions(ready: Library) -> None:
    """The library is read once for a request: the graders it names come back with their
    definitions, a resume's from the run itself, and starting the resume reads them from there."""
    checked = RunRequest(grader="exact", dataset="qa").check(ready)
    assert [(g.key, g.version, g.definition.kind) for g in checked.named.graders] == [("exact", 1, "builtin")]
    assert checked.named.dataset is not None and checked.named.dataset.sample_count == 3
    info = RunRequest(grader="exact", dataset="qa").start(ready)
    resumed = RunRequest(resume=info.id).check(ready)
    assert [(g.key, g.version) for g in resumed.named.graders] == [("exact", 1)]
    assert resumed.named.previous is not None and resumed.named.previous.id == info.id
    assert resumed.named.dataset is None  # a resume grades the run's own samples
    assert RunRequest(resume=info.id).start(ready, resumed).id == info.id
