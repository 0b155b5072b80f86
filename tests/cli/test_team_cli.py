"""A team's library on a real PostgreSQL server, through the console entry point (docs/team.md):
the demo created there, two processes grading into it at once, a lock refusing another user by
the owner's name, a library copied there and back, and a bad URL or a down server refused in one
sentence with exit 2 and nothing created. The commands run in-process (``run_main``: streams, exit
code and environment as a child's) but where processes are the subject: two grading at once, and a
refusal in a working directory of its own that must stay empty."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg import PgServer, free_port

from studio.core.models import BuiltinGrader
from studio.core.models import files as definition_files
from studio.core.store import Library
from tests.conftest import REPO, run_main


def cli_as(db: str | Path, user: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_main(*args, db=db, env={"GRADER_STUDIO_USER": user})  # type: ignore[arg-type]


def test_the_demo_library_is_created_on_postgresql(pg_url: str) -> None:
    made = run_main("demo", db=pg_url)  # type: ignore[arg-type]
    assert made.returncode == 0, made.stderr
    assert "demo library at postgresql://postgres@127.0.0.1" in made.stdout
    listed = json.loads(run_main("graders", "list", "--json", db=pg_url).stdout)  # type: ignore[arg-type]
    assert len(listed) == 33
    shown = json.loads(run_main("runs", "show", "1", "--json", db=pg_url).stdout)  # type: ignore[arg-type]
    assert shown["run"]["status"] == "completed" and len(shown["results"]) == 60
    # a suite run there: the overall row and each grader's
    suite = run_main("run", "--graders", "qa-exact-builtin,qa-contains-expected", "qa", "--json",
                    db=pg_url)  # type: ignore[arg-type]
    assert suite.returncode == 0, suite.stderr
    summary = json.loads(suite.stdout)
    assert summary["status"] == "completed" and summary["done"] == 60
    report = run_main("runs", "export", str(summary["id"]), "--format", "csv", db=pg_url)  # type: ignore[arg-type]
    table = list(csv.reader(io.StringIO(report.stdout)))
    assert "grader.qa-exact-builtin" in table[0] and len(table) == 61


def test_two_processes_grade_into_one_library_at_once_exactly_once(pg_url: str) -> None:
    assert run_main("demo", db=pg_url).returncode == 0  # type: ignore[arg-type]
    env = {**os.environ, "GRADER_STUDIO_DB": pg_url}
    runs = [subprocess.Popen([sys.executable, "-m", "studio", "run", key, "qa", "--json"], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for key in ("qa-exact-builtin", "qa-contains-expected", "no-refusal")]
    outs = [p.communicate(timeout=120) for p in runs]
    assert [p.returncode for p in runs] == [0, 0, 0], [err for _, err in outs]
    with Library.open(pg_url) as lib:
        ids = [json.loads(out)["id"] for out, _ in outs]
        assert len(set(ids)) == 3
        with lib.engine.connect() as conn:
            for run_id in ids:
                n, distinct = conn.exec_driver_sql(
                    "SELECT count(*), count(DISTINCT sample_idx) FROM results WHERE run_id = ?", (run_id,)).one()
                assert n == distinct == 60
                assert lib.runs.get(run_id).status == "completed"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_lock_refuses_another_user_by_the_owners_name(backend: str, tmp_path: Path,
                                                        request: pytest.FixtureRequest) -> None:
    db = tmp_path / "lib.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_url")
    path = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "g.grader.yaml")
    made = cli_as(db, "alice", "graders", "create", str(path))
    assert made.returncode == 0, made.stderr
    locked = cli_as(db, "alice", "graders", "lock", "exact")
    assert locked.returncode == 0 and "locked by alice since" in locked.stdout
    for attempt in (("graders", "delete", "exact"), ("graders", "unlock", "exact")):
        refused = cli_as(db, "bob", *attempt)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error: grader 'exact' is locked by alice since ")
        assert len(refused.stderr.strip().splitlines()) == 1
    forced = cli_as(db, "bob", "graders", "unlock", "exact", "--force")
    assert forced.returncode == 0, forced.stderr
    versions = json.loads(cli_as(db, "bob", "graders", "versions", "exact", "--json").stdout)
    assert [(v["action"], v["author"]) for v in versions] == [("create", "alice"), ("force-unlock", "bob")]


def test_library_copy_there_and_back(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "mine.sqlite"
    assert run_main("demo", db=source).returncode == 0
    there = run_main("library", "copy", str(source), pg_url)
    assert there.returncode == 0, there.stderr
    assert there.stdout.startswith("copied 33 graders, 33 grader versions, 0 suites, 4 datasets, 220 samples, "
                                   "1 runs, 60 results")
    assert "endpoints (without keys)" in there.stdout and pg_url in there.stdout
    back = tmp_path / "back.sqlite"
    assert run_main("library", "copy", pg_url, str(back)).returncode == 0
    again = run_main("library", "copy", str(source), pg_url)
    assert again.returncode == 1 and "is not empty" in again.stderr


def _refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _in(cwd: Path, db: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "studio", "--db", db, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_down_server_or_a_bad_url_is_one_sentence_exit_2_and_nothing_created(
        tmp_path: Path, pg_server: PgServer) -> None:
    down = f"postgresql://alice:s3cret@127.0.0.1:{free_port()}/team"
    line = _refused(_in(tmp_path, down, "graders", "list"))
    assert "cannot reach the library at postgresql://alice@127.0.0.1:" in line and "s3cret" not in line
    bad = _refused(_in(tmp_path, "postgresql://alice@127.0.0.1:notaport/team", "graders", "list"))
    assert bad == "error: cannot read the library URL postgresql://…: the port must be a number from 1 to 65535"
    missing = _refused(_in(tmp_path, pg_server.url("no_such_library"), "graders", "list"))
    assert 'database "no_such_library" does not exist' in missing
    assert list(tmp_path.iterdir()) == []  # no file named after the URL, nothing else
    import psycopg

    with psycopg.connect(pg_server.admin_url) as conn:
        names = [r[0] for r in conn.execute("SELECT datname FROM pg_database")]
    assert "no_such_library" not in names and "team" not in names


def test_a_stale_save_from_the_command_line_names_the_other_version(tmp_path: Path, pg_url: str) -> None:
    first = definition_files.save(BuiltinGrader(key="exact", function="exact_match"), tmp_path / "a.grader.yaml")
    assert cli_as(pg_url, "alice", "graders", "create", str(first)).returncode == 0
    theirs = definition_files.save(BuiltinGrader(key="exact", function="contains"), tmp_path / "b.grader.yaml")
    assert cli_as(pg_url, "bob", "graders", "save", str(theirs), "--from-version", "1").returncode == 0
    mine = definition_files.save(BuiltinGrader(key="exact", function="starts_with"), tmp_path / "c.grader.yaml")
    refused = cli_as(pg_url, "alice", "graders", "save", str(mine), "--from-version", "1")
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: grader 'exact' changed since you opened v1: v2 by bob (")
    versions = json.loads(cli_as(pg_url, "alice", "graders", "versions", "exact", "--json").stdout)
    assert [(v["author"], v["definition"]["function"]) for v in versions] == [("alice", "exact_match"),
                                                                             ("bob", "contains")]
