"""Exports share one streaming implementation (``studio.core.store.reports``): the grid's CSV and
``grader-studio runs export --format csv|jsonl`` write the same columns from one SQL cursor."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from studio.core.models import BuiltinGrader, Outcome, Sample, Turn
from studio.core.store import Library, reports
from studio.core.store.results_query import ResultFilter, ResultQuery

REPO = Path(__file__).resolve().parents[3]


def make_run(lib: Library) -> int:
    lib.graders.create(BuiltinGrader(key="exact", function="exact_match"))
    dataset = lib.datasets.create("qa", [
        Sample(id=f"q{i}", messages=[Turn(role="user", content=f"question {i}, with a comma")],
               completion=f"answer {i}", expected=None if i == 2 else f"answer {i}") for i in range(5)])
    run = lib.runs.create(lib.graders.get("exact").id, 1, dataset.id, 5)
    lib.runs.write_results(run.id, [
        (i, f"q{i}", Outcome(status="error" if i == 3 else "ok", score=None if i == 3 else i / 4,
                             scores={} if i == 3 else {"f1": i / 8, "em": float(i % 2)},
                             error="judge timed out" if i == 3 else None, rationale=f"line\nbreak {i}",
                             details={"n": i}, raw={"text": "raw"}, duration_ms=1.5 * i, cached=i == 1))
        for i in (4, 0, 3, 1, 2)])
    return run.id


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "studio", "--db", str(db), *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def test_cli_csv_and_jsonl_exports_stream_every_column(library: Library, db_path: Path, tmp_path: Path) -> None:
    run_id = make_run(library)
    out = tmp_path / "run.csv"
    result = cli(db_path, "runs", "export", str(run_id), "--format", "csv", "-o", str(out))
    assert result.returncode == 0 and "wrote 5 results" in result.stderr
    with out.open(encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["index", "sample_id", "status", "score", "metric.em", "metric.f1", "error", "rationale", "duration_ms",
                        "prompt_tokens", "completion_tokens", "cached", "input", "completion", "expected"]
    assert [row[0] for row in table[1:]] == ["0", "1", "2", "3", "4"]  # sample order, whatever the write order
    assert table[2][:6] == ["1", "q1", "ok", "0.25", "1.0", "0.125"] and table[2][11] == "True"
    assert table[4][2:7] == ["error", "", "", "", "judge timed out"] and table[3][14] == ""
    assert table[1][7] == "line\nbreak 0" and table[1][12].endswith("with a comma")

    jsonl = cli(db_path, "runs", "export", str(run_id), "--format", "jsonl")
    lines = [json.loads(line) for line in jsonl.stdout.splitlines()]
    shown = json.loads(cli(db_path, "runs", "show", str(run_id), "--json").stdout)["results"]
    assert len(lines) == 5 and lines == shown  # runs show --json gives the same whole texts (issue 24)
    assert lines[2]["expected"] is None and lines[1]["details"] == {"n": 1} and lines[1]["raw"] == {"text": "raw"}


def test_export_of_an_unknown_run_fails_before_making_a_file(library: Library, db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "nothing.csv"
    result = cli(db_path, "runs", "export", "42", "-o", str(out))
    assert result.returncode == 1 and "no run with id 42" in result.stderr and not out.exists()


def test_a_filtered_sorted_query_exports_only_what_it_selects(library: Library) -> None:
    run_id = make_run(library)
    query = reports.run_query(library, run_id).with_filter(ResultFilter(statuses=("ok",))).with_sort("score", True)
    assert isinstance(query, ResultQuery)
    out = io.StringIO()
    progress: list[int] = []
    assert reports.write_csv(library.engine, query, out, progress.append) == 4 and progress == [4]
    assert [row[0] for row in csv.reader(io.StringIO(out.getvalue()))][1:] == ["4", "2", "1", "0"]
    out = io.StringIO()
    assert reports.write_results(library.engine, reports.run_query(library, run_id), out, "jsonl") == 5
