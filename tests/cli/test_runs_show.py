"""``runs show`` / ``runs list`` for a reviewer: the texts a result is about, --failed versus --errors,
one sample whole, tables that fit the terminal, colour only on a terminal (issue 24)."""

from __future__ import annotations

import io
import json
import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli.tables import Column, render, use_colour, width_of
from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.store import Library

GRADER = """from adaptive_harmony import StringThread

async def grade(thread: StringThread) -> float:
    answer = thread.completion()
    if answer == "boom":
        raise ValueError("the grader broke on this one")
    if answer == "nan":
        return float("nan")
    return 1.0 if answer == thread.metadata.get("expected") else 0.25
"""
LONG = "Which of the rivers that cross more than three countries carries the most water into the sea? " * 3
RATIONALE_TAIL = "the full rationale ends here"


@pytest.fixture
def graded(db_path: Path, cli):  # type: ignore[no-untyped-def]
    completions = ["Paris", "Lyon", "boom", "nan", "Paris"]
    with Library.open(db_path) as lib:
        lib.graders.create(FunctionGrader(key="match", source=GRADER))
        lib.datasets.create("d", [Sample(id=f"s{i}", messages=[Turn(role="user", content=LONG + str(i))],
                                         completion=c, expected="Paris") for i, c in enumerate(completions)])
    ran = cli("run", "match", "d", "--json")
    assert ran.returncode in (0, 1), ran.stderr
    return json.loads(ran.stdout)["id"]


def _by_status(results: list[dict]) -> dict[str, list[str]]:  # type: ignore[type-arg]
    out: dict[str, list[str]] = {}
    for r in results:
        out.setdefault(r["status"], []).append(r["sample_id"])
    return out


def test_failed_means_not_passed_and_errors_means_errors(graded: int, cli) -> None:  # type: ignore[no-untyped-def]
    everything = json.loads(cli("runs", "show", str(graded), "--json").stdout)["results"]
    statuses = _by_status(everything)
    assert statuses["error"] == ["s2"] and "s3" in statuses.get("invalid", []) + statuses.get("error", [])
    # whole texts in --json
    assert everything[0]["input"] == LONG + "0" and everything[1]["completion"] == "Lyon"
    assert everything[1]["expected"] == "Paris"

    failed = json.loads(cli("runs", "show", str(graded), "--failed", "--json").stdout)["results"]
    assert sorted(r["sample_id"] for r in failed) == ["s1", "s2", "s3"]  # 0.25 is under 0.5
    errors = json.loads(cli("runs", "show", str(graded), "--errors", "--json").stdout)["results"]
    assert sorted(r["sample_id"] for r in errors) == ["s2", "s3"]


def test_the_table_shows_input_output_expected_within_80_columns(graded: int, cli) -> None:  # type: ignore[no-untyped-def]
    shown = cli("runs", "show", str(graded), env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    header = next(line for line in lines if line.startswith("#"))
    for title in ("INPUT", "OUTPUT", "EXPECTED", "RESULT", "SCORE"):
        assert title in header
    table = lines[lines.index(header):]
    assert len(table) == 2 + 5
    assert all(width_of(line) <= 80 for line in table), [line for line in table if width_of(line) > 80]
    assert "\x1b[" not in shown.stdout  # not a terminal: no colour
    row = next(line for line in table if " s1 " in line)
    assert "FAIL" in row and "Lyon" in row and "Paris" in row and "Which" in row and "…" in row
    wide = cli("runs", "show", str(graded), env={"COLUMNS": "200"}).stdout.splitlines()
    assert max(width_of(line) for line in wide) > 80  # the width is the terminal's, not a constant
    listing = cli("runs", "list", env={"COLUMNS": "60"}).stdout.splitlines()
    assert listing and all(width_of(line) <= 60 for line in listing)


def test_one_sample_whole(graded: int, cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    conn = sqlite3.connect(db_path)  # a long rationale must come out whole, not cut
    rationale = ("First line of the judge's reasoning.\n" + "word " * 60 + "\n" + RATIONALE_TAIL)
    conn.execute("UPDATE results SET rationale = ? WHERE sample_id = 's1'", (rationale,))
    conn.commit()
    conn.close()
    shown = cli("runs", "show", str(graded), "--sample", "s1", env={"COLUMNS": "70"})
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    for part in ("Thread", "Reference", "Rationale", "FAIL", "0.25", "Lyon", "Paris", RATIONALE_TAIL,
                 "First line of the judge's reasoning."):
        assert part in text, part
    assert LONG.split()[-1] in text and text.count("word") == 60
    assert all(width_of(line) <= 70 for line in text.splitlines())
    by_index = cli("runs", "show", str(graded), "--sample", "1", "--json")
    assert json.loads(by_index.stdout)["sample_id"] == "s1"
    missing = cli("runs", "show", str(graded), "--sample", "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr and "Traceback" not in missing.stderr


def test_colour_only_on_a_terminal_and_never_with_no_color(graded: int, db_path: Path) -> None:
    def on_a_pty(extra: dict[str, str]) -> str:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | extra | {
            "GRADER_STUDIO_DB": str(db_path), "COLUMNS": "100"}
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "studio", "runs", "show", str(graded)], stdout=follower,
                                stderr=subprocess.PIPE, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
        os.close(leader)
        return b"".join(chunks).decode()

    coloured = on_a_pty({})
    assert "\x1b[31mFAIL\x1b[0m" in coloured and "\x1b[32mPASS\x1b[0m" in coloured
    assert "\x1b[" not in on_a_pty({"NO_COLOR": "1"})


def test_render_fits_and_cuts_only_long_text() -> None:
    columns = [Column("#", right=True), Column("STATUS", colour=True), Column("TEXT", flexible=True)]
    rows = [[1, "ok", "x" * 200], [22, "error", "short"]]
    lines = render(rows, columns, width=40)
    assert all(width_of(line) <= 40 for line in lines)
    assert lines[2].startswith(" 1  ok") and lines[2].endswith("…") and "short" in lines[3]
    assert render(rows, columns, width=400)[2].endswith("x" * 200)
    wide = render([[1, "ok", "漢字" * 40]], columns, width=30)
    assert all(width_of(line) <= 30 for line in wide)


def test_use_colour_follows_the_stream_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(Tty()) and not use_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Tty())


def test_a_terminal_gets_a_page_and_the_count_json_every_result(graded: int, cli) -> None:  # type: ignore[no-untyped-def]
    """A million-result run's failures are not a million lines: ``--limit`` (default 50 on a
    terminal) pages in SQL, the line under the table says how many there are (the summary's count,
    by the pass rule); ``--json`` streams every result as one document, or ``--limit``'s first N."""
    shown = cli("runs", "show", str(graded), "--failed", "--limit", "1", env={"COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if line.lstrip().startswith(("1 ", "2 ", "3 "))]
    assert [line.split()[1] for line in rows] == ["s1"]
    assert "the first 1 of 3 failed results" in shown.stdout
    everything = cli("runs", "show", str(graded), "--failed", "--limit", "0", env={"COLUMNS": "160"})
    assert "the first" not in everything.stdout and {"s1", "s2", "s3"} <= set(everything.stdout.split())

    whole = json.loads(cli("runs", "show", str(graded), "--json").stdout)
    assert [r["sample_id"] for r in whole["results"]] == [f"s{i}" for i in range(5)]
    assert whole["run"]["id"] == graded and whole["run"]["usage"] is not None
    first = json.loads(cli("runs", "show", str(graded), "--failed", "--json", "--limit", "2").stdout)["results"]
    assert [r["sample_id"] for r in first] == ["s1", "s2"]
    none = json.loads(cli("runs", "show", str(graded), "--errors", "--json", "--limit", "0").stdout)
    assert [r["sample_id"] for r in none["results"]] == ["s2", "s3"]
    for limit in ("-1", "-3"):  # bad input: a sentence and exit 2, as every refused argument
        refused = cli("runs", "show", str(graded), "--limit", limit)
        assert refused.returncode == 2, refused.stderr
        assert f"error: --limit must be 0 (every result) or more, not {limit}" in refused.stderr
        assert "bug" not in refused.stderr


@pytest.mark.parametrize(("args", "said"), [(("--offset", "-1"), "--offset must be 0 or more, not -1"),
                                            (("--limit", "-3"), "--limit must be 0 or more, not -3")])
def test_datasets_show_refuses_a_negative_offset_or_limit(graded: int, cli, args: tuple[str, ...],  # type: ignore[no-untyped-def]
                                                          said: str) -> None:
    """A negative offset numbered the samples from #-1 (and a negative limit was read as none)."""
    shown = cli("datasets", "show", "d", *args)
    assert shown.returncode == 2 and f"error: {said}" in shown.stderr and "#" not in shown.stdout
