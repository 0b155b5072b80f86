""""Did not pass" is one rule in SQL (``failing_sql``, the grid and ``runs show --failed``) and in
Python (``outcome_word``, the RESULT column): an error, an invalid answer, a judge's FAIL whatever its
score, or a score under the pass threshold; never an NA or an ok result without a score."""

from __future__ import annotations

from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.store import Library
from studio.core.store.reports import iter_records
from studio.core.store.results_query import ResultFilter, ResultQuery, outcome_word

CASES = [  # status, score, details, expected word
    ("ok", 1.0, {}, "PASS"),
    ("ok", 0.5, {}, "PASS"),             # at the threshold passes
    ("ok", 0.49, {}, "FAIL"),
    ("ok", 0.9, {"verdict": "FAIL"}, "FAIL"),  # the judge's own verdict wins
    ("ok", 0.1, {"verdict": "PASS"}, "PASS"),
    ("ok", None, {"verdict": "NA"}, "NA"),
    ("ok", None, {}, "NA"),
    ("error", None, {}, "error"),
    ("invalid", 0.0, {}, "invalid"),
    ("skipped", None, {}, "skipped"),
]


def test_sql_and_python_agree_on_what_did_not_pass(library: Library) -> None:
    library.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = library.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content="q")],
                                                   completion="a") for i in range(len(CASES))])
    run = library.runs.create(library.graders.get("exact").id, 1, dataset.id, len(CASES))
    library.runs.write_results(run.id, [
        (i, f"s{i}", Outcome(status=status, score=score, details=details,  # type: ignore[arg-type]
                             error="boom" if status == "error" else None))
        for i, (status, score, details, _word) in enumerate(CASES)])
    for i, (status, score, details, word) in enumerate(CASES):
        assert outcome_word(status, score, details, 0.5) == word, CASES[i]
    query = ResultQuery(run.id, dataset.id, ResultFilter(failing=True, pass_threshold=0.5))
    failing = [r["sample_id"] for r in iter_records(library.engine, query)]
    expected = [f"s{i}" for i, case in enumerate(CASES) if case[3] in ("FAIL", "error", "invalid")]
    assert failing == expected
    stricter = ResultQuery(run.id, dataset.id, ResultFilter(failing=True, pass_threshold=0.95))
    assert [r["sample_id"] for r in iter_records(library.engine, stricter)] == ["s1", "s2", "s3", "s7", "s8"]
