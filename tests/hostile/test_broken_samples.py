"""A dataset's sample row a teammate rewrote into JSON that is no sample (tests/hostile_rows.py), on
SQLite and PostgreSQL: a run over it grades the other samples and stores that one as an error
naming the sample and its field, ends ``completed``, and ``runs show`` and ``--resume`` work
afterwards, for every lane a run reads samples by (built-in checks, sandboxed functions, judges over
HTTP, suites). Never a traceback (exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_rows import AUTHOR, BAD_SAMPLES, break_sample
from hostile_text import hostile_json, hostile_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judge_helpers import add_endpoint, qa

from studio.core.models import BinaryJudge, BuiltinGrader, FunctionGrader
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def _no_bug(result) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode != 70 and "Traceback" not in result.stderr and "hit a bug" not in result.stderr, \
        result.stderr


FUNCTION = "def grade(sample, item):\n    return 1.0 if sample['output_text'] == 'Paris' else 0.0\n"


@pytest.fixture
def prepared(library: Library, fake_judge) -> Library:  # type: ignore[no-untyped-def]
    add_endpoint(library, fake_judge)
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    library.graders.create(FunctionGrader(key="func", source=FUNCTION, contract="mka1_sample", timeout_seconds=10, memory_mb=256))
    library.graders.create(BinaryJudge(key="judge", criteria="Names the right capital.", endpoint="fake"))
    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(6)])
    assert library.suites is not None
    return library


@pytest.mark.parametrize("bad", sorted(BAD_SAMPLES))
@pytest.mark.parametrize("target", ["exact", "func", "judge", "suite"])
def test_a_broken_sample_is_that_samples_error(prepared: Library, cli, target: str, bad: str) -> None:  # type: ignore[no-untyped-def]
    if target == "suite":
        assert cli("suites", "create", "suite", "exact", "func", "judge").returncode == 0
    break_sample(prepared, "geo", "s2", BAD_SAMPLES[bad])
    prepared.engine.dispose()
    ran = cli("run", target, "geo", "--json", "--allow-unsandboxed")
    _no_bug(ran)
    assert ran.returncode in (0, 1), ran.stderr
    record = json.loads(ran.stdout)
    run_id = str(record["id"])
    shown = cli("runs", "show", run_id, "--json")
    _no_bug(shown)
    assert shown.returncode == 0, shown.stderr
    info = json.loads(shown.stdout)["run"]
    assert info["status"] == "completed", info
    results = cli("runs", "export", run_id, "--format", "jsonl")
    _no_bug(results)
    rows = [json.loads(line) for line in results.stdout.splitlines()]
    by_id = {r["sample_id"]: r for r in rows}
    assert len(rows) == 6
    assert by_id["s2"]["status"] == "error"
    assert "“geo #2”" in by_id["s2"]["error"] and f"(written by {AUTHOR})" in by_id["s2"]["error"]
    assert all(r["status"] != "error" for sid, r in by_id.items() if sid != "s2"), [r["error"] for r in rows]
    resumed = cli("run", "--resume", run_id, "--allow-unsandboxed")
    _no_bug(resumed)
    retried = cli("run", "--resume", run_id, "--retry-errors", "--allow-unsandboxed")
    _no_bug(retried)


def test_generate_skips_a_broken_source_sample(library: Library, cli, fake_judge) -> None:  # type: ignore[no-untyped-def]
    """``generate`` over a dataset with a broken row sends every other sample (the rows after it
    too), stores their answers, and names the broken one among its errors; ``--resume`` works."""
    from studio.core.demo import model_endpoint_config
    from studio.core.store.endpoints import EndpointRepository

    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(6)])
    config = model_endpoint_config("model", "scripted-model-a", fake_judge.port).model_copy(
        update={"retry_backoff": 0.01, "max_retries": 0})
    EndpointRepository.of(library).save(config)
    break_sample(library, "geo", "s2", BAD_SAMPLES["wrong-type"])
    library.engine.dispose()
    done = cli("generate", "geo", "--endpoint", "model", "--name", "answers", "--concurrency", "1", "--json")
    _no_bug(done)
    result = json.loads(done.stdout)
    assert result["stored"] == 5 and result["calls"] == 5, result
    assert any("“geo #2”" in error for error in result["errors"]), result
    resumed = cli("generate", "--name", "answers", "--resume", "--json")
    _no_bug(resumed)
    assert json.loads(resumed.stdout)["stored"] == 5


def test_showing_a_dataset_with_a_broken_sample_is_a_sentence(library: Library, cli) -> None:  # type: ignore[no-untyped-def]
    library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(3)])
    break_sample(library, "geo", "s1", BAD_SAMPLES["not-json"])
    library.engine.dispose()
    for args in (("datasets", "show", "geo"), ("datasets", "show", "geo", "--json")):
        shown = cli(*args)
        _no_bug(shown)
        assert shown.returncode == 2 and "“geo #1”" in shown.stderr and f"(written by {AUTHOR})" in shown.stderr
        assert "\x1b" not in shown.stderr


def test_a_sample_written_over_several_lines_is_graded(prepared: Library, cli) -> None:  # type: ignore[no-untyped-def]
    """A teammate's sample JSON that validates but spans lines is graded like any other: the raw
    lane hands a sandbox worker the stored text as it is."""
    break_sample(prepared, "geo", "s2", json.dumps({"id": "s2", "messages": [], "completion": "Paris"}, indent=2))
    prepared.engine.dispose()
    ran = cli("run", "func", "geo", "--json", "--allow-unsandboxed")
    _no_bug(ran)
    assert json.loads(ran.stdout)["counts"] == {"ok": 6}, ran.stdout


def _storable(text: str, dialect: str) -> str:
    """``text`` as the backend stores text at all (PostgreSQL's refuses NUL and lone surrogates)."""
    if dialect == "sqlite":
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _dumps(value: object) -> str:
    """JSON text of ``value``; one nested deeper than the encoder recurses, written out flat."""
    try:
        return json.dumps(value)
    except RecursionError:
        return "[" * 3000 + "]" * 3000


def _sample_shaped(values: dict) -> str:  # type: ignore[type-arg]
    return _dumps({"id": "s2", **values})


#: what a teammate may write into a sample row: any text, any JSON, JSON shaped like a sample with
#: hostile values in its fields
STORED = st.one_of(
    hostile_text,
    hostile_json.map(_dumps),
    st.fixed_dictionaries({}, optional={"messages": hostile_json, "completion": hostile_json,
                                        "expected": hostile_json, "metadata": hostile_json,
                                        "fields": hostile_json}).map(_sample_shaped),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=STORED)
def test_any_stored_row_is_graded_or_that_samples_error(library: Library, data: str) -> None:
    """Hypothesis over what a teammate may write into one sample's row, on both backends: a run of
    a built-in check and of a suite ends completed, that sample graded or its error naming it, the
    others graded; reading the row for display is the sample or a BrokenRowError, nothing else."""
    from studio.core.engine.runner import run_grader
    from studio.core.models.broken import BrokenRowError
    from studio.core.models.suite import SuiteDefinition, SuiteMember

    if "geo" not in {d.name for d in library.datasets.list()}:
        library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
        library.graders.create(BuiltinGrader(key="has", function="contains"))
        library.suites.create(SuiteDefinition(key="suite", graders=[SuiteMember(grader="exact"),
                                                                     SuiteMember(grader="has")]))
        library.datasets.create("geo", [qa(f"s{i}", "Capital of France?", "Paris", "Paris") for i in range(4)])
    break_sample(library, "geo", "s2", _storable(data, library.engine.dialect.name))
    record = library.datasets.get("geo")
    try:
        library.datasets.sample("geo", 2)
    except BrokenRowError as exc:
        assert "“geo #2”" in str(exc)
    for target in ("exact", "suite"):
        run = run_grader(library, target, "geo")
        assert run.status == "completed", run
        results = {r["sample_id"]: r for r in library.runs.results(run.id)}
        assert len(results) == record.sample_count
        assert all(results[f"s{i}"]["status"] == "ok" for i in (0, 1, 3)), results
        if results.get("s2", {}).get("status") == "error":
            assert "“geo #2”" in results["s2"]["error"] or "s2" in results["s2"]["error"]
