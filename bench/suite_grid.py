"""The results grid's queries on a 1,000,000-sample suite run of five graders vs a one-grader run.

Both runs are written straight into SQLite (not timed): the one-grader run as ``bench/ui_grid.py``
builds it, the suite run with the same scores plus five graders' scores under ``scores`` (what a
suite run stores). Timed, best of ``--repeat``: opening (the ids in sample order), sorting by the
score (the overall for the suite), sorting by one grader's column, a per-grader filter ("grader a
fails but grader b passes"), and one page of rows (what scrolling costs). The machine's load is
printed with the figures; compare the two runs' figures, measured side by side.

Run: ``python bench/suite_grid.py [--rows 1000000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from studio.core.models import BuiltinGrader, Sample, Turn
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.store import Library
from studio.core.store.results_query import ResultFilter, ResultQuery, load_ids, load_rows

KEYS = ("exact", "has", "starts", "ends", "printable")


def build(lib: Library, n: int) -> tuple[int, int]:
    for key, function in zip(KEYS, ("exact_match", "contains", "starts_with", "ends_with", "ascii_printable_only"),
                             strict=True):
        lib.graders.create(BuiltinGrader(key=key, function=function))
    lib.suites.create(SuiteDefinition(key="five", overall="mean", graders=[SuiteMember(grader=k) for k in KEYS]))
    dataset = lib.datasets.create("big", (
        Sample(id=f"s{i}", messages=[Turn(role="user", content=f"question {i}")], completion=f"answer {i}",
               expected=f"answer {i}") for i in range(1000)))
    single = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, n)
    slots = [{"grader_id": lib.graders.get(k).id, "grader_key": k, "grader_version": 1} for k in KEYS]
    suite = lib.runs.create(slots[0]["grader_id"], 1, dataset.id, n, slots=slots,
                            suite={"key": "five", "version": 1, "overall": "mean", "graders": list(KEYS)})
    scores = " || ', ' || ".join(f"'\"{k}\": ' || ((i * {p}) % 1000) / 1000.0" for k, p in
                                 zip(KEYS, (7919, 104729, 1299709, 15485863, 179424673), strict=True))
    raw = lib.engine.raw_connection()
    try:
        raw.execute("BEGIN")
        for run_id, scores_sql in ((single.id, "'{\"score\": ' || ((i * 7919) % 1000) / 1000.0 || '}'"),
                                   (suite.id, "'{' || " + scores + " || '}'")):
            raw.execute(
                f"""WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ? - 1)
                   INSERT INTO results (run_id, sample_idx, sample_id, status, score, scores, duration_ms,
                                        prompt_tokens, completion_tokens, cached)
                   SELECT ?, i, 's' || i, 'ok', ((i * 7919) % 1000) / 1000.0, {scores_sql}, (i % 997) * 1.5,
                          0, 0, 0
                   FROM c""", (n, run_id))
        raw.execute("COMMIT")
    finally:
        raw.close()
    return single.id, suite.id


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Library.open(Path(tmp) / "lib.sqlite") as lib:
        single, suite = build(lib, args.rows)
        dataset_id = lib.runs.raw(single).dataset_id
        engine = lib.engine
        print(f"rows {args.rows:,} per run, load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
        figures = {}
        for name, run_id in (("one grader", single), ("suite of five", suite)):
            query = ResultQuery(run_id, dataset_id)
            ids = load_ids(engine, query).ids
            page = list(ids[500_000 % max(1, len(ids)):][:100])
            figures[name] = {
                "open": best(lambda q=query: load_ids(engine, q), args.repeat),
                "sort score": best(lambda q=query: load_ids(engine, q.with_sort("score", True)), args.repeat),
                "page of 100 rows": best(lambda p=page: load_rows(engine, dataset_id, p), args.repeat),
            }
            if run_id == suite:
                figures[name]["sort by a grader"] = best(
                    lambda q=query: load_ids(engine, q.with_sort("grader:has", True)), args.repeat)
                flt = ResultFilter(graders=(("exact", "fail", 0.5), ("has", "pass", 0.5)))
                figures[name]["a fails, b passes"] = best(
                    lambda q=query, f=flt: load_ids(engine, q.with_filter(f)), args.repeat)
        for name, values in figures.items():
            print(f"{name:>14}: " + "  ".join(f"{k} {v * 1000:.1f} ms" for k, v in values.items()))
        one, five = figures["one grader"], figures["suite of five"]
        print("suite / one: " + "  ".join(f"{k} {five[k] / one[k]:.2f}x" for k in one))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
