from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from studio.core.models import BuiltinGrader, FunctionGrader
from studio.core.models import files as definition_files


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """These tests run on SQLite and on a real PostgreSQL server (tests/pg.py)."""
    return any_db



def write(tmp_path: Path, grader, name: str = "g.grader.yaml") -> Path:  # type: ignore[no-untyped-def]
    return definition_files.save(grader, tmp_path / name)


def test_lifecycle_from_the_command_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    v1 = write(tmp_path, BuiltinGrader(key="exact", function="exact_match"))
    assert cli("graders", "create", str(v1)).returncode == 0
    v2 = write(tmp_path, BuiltinGrader(key="exact", name="Exact", function="exact_match"), "v2.grader.yaml")
    assert "saved exact v2" in cli("graders", "save", str(v2)).stdout

    locked = cli("graders", "lock", "exact")
    assert locked.returncode == 0
    refused = cli("graders", "delete", "exact")
    assert refused.returncode == 1 and "locked" in refused.stderr and "Traceback" not in refused.stderr
    refused = cli("graders", "save", str(v1))
    assert refused.returncode == 1 and "locked" in refused.stderr
    assert cli("graders", "unlock", "exact").returncode == 0

    assert cli("graders", "delete", "exact").returncode == 0
    listed = json.loads(cli("graders", "list", "--json").stdout)
    assert listed == []
    trash = json.loads(cli("graders", "list", "--trash", "--json").stdout)
    assert trash[0]["key"] == "exact" and trash[0]["deleted"]
    assert cli("graders", "restore", "exact").returncode == 0

    versions = json.loads(cli("graders", "versions", "exact", "--json").stdout)
    assert [v["version"] for v in versions] == [1, 2]
    diff = cli("graders", "diff", "exact", "1", "2").stdout
    assert "+name: Exact" in diff
    shown = cli("graders", "show", "exact").stdout
    assert definition_files.loads(shown).name == "Exact"


def test_exit_codes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = cli("graders", "show", "nope")
    assert missing.returncode == 1 and "no grader with key 'nope'" in missing.stderr
    assert cli("graders", "frobnicate").returncode == 2
    assert cli("run").returncode == 2
    bad = tmp_path / "bad.grader.yaml"
    bad.write_text("schema_version: 1\nkind: builtin\nkey: x\nfunction: nope\n")
    result = cli("graders", "create", str(bad))
    assert result.returncode == 1 and "bad.grader.yaml:4: function" in result.stderr


def test_python_file_becomes_a_function_grader(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "my_grader.py"
    source.write_text("def grade(sample, item):\n    return 1.0\n")
    result = cli("graders", "create", str(source))
    assert result.returncode == 0, result.stderr
    shown = json.loads(cli("graders", "show", "my-grader", "--json").stdout)
    assert shown["definition"]["contract"] == "mka1_sample"
    assert FunctionGrader.model_validate({k: v for k, v in shown["definition"].items() if k != "kind"}).source


def test_schema_and_datasets(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    schema = json.loads(cli("schema").stdout)
    assert "schema_version" in json.dumps(schema)
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "2+2?", "target": "4", "output_text": "4"}\n{"question": "x", "target": 1\n')
    result = cli("datasets", "import", str(data), "--name", "d")
    assert result.returncode == 1 and "d.jsonl:2" in result.stderr and "nothing was imported" in result.stderr
    data.write_text('{"question": "2+2?", "target": "4", "output_text": "4"}\n')
    assert cli("datasets", "import", str(data), "--name", "d").returncode == 0
    listed = json.loads(cli("datasets", "list", "--json").stdout)
    assert listed[0]["name"] == "d" and listed[0]["format"] == "mka1"
    shown = json.loads(cli("datasets", "show", "d", "--json").stdout)
    assert shown["samples"][0]["completion"] == "4"


def test_demo_library_and_a_run(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo").returncode == 0
    graders = json.loads(cli("graders", "list", "--json").stdout)
    kinds = {g["kind"] for g in graders}
    assert {"function", "builtin", "binary_judge", "range_judge", "composite"} <= kinds
    datasets = {d["name"]: d["sample_count"] for d in json.loads(cli("datasets", "list", "--json").stdout)}
    assert len(datasets) >= 2 and all(n >= 50 for n in datasets.values())
    run = cli("run", "qa-token-f1", "qa", "--json")
    summary = json.loads(run.stdout)
    assert summary["status"] == "completed" and summary["counts"] == {"ok": 60}
    shown = json.loads(cli("runs", "show", str(summary["id"]), "--json").stdout)
    assert len(shown["results"]) == 60 and {"sample_id", "status", "score", "scores", "error", "rationale",
                                            "duration_ms"} <= set(shown["results"][0])
    csv_text = cli("runs", "export", str(summary["id"]), "--format", "csv").stdout
    table = list(csv.reader(io.StringIO(csv_text)))
    assert table[0][:4] == ["index", "sample_id", "status", "score"] and len(table) == 61


def test_a_broken_or_newer_library_is_a_sentence(tmp_path: Path) -> None:
    import sqlite3

    from tests.conftest import run_main  # in-process: exit code and streams as a child's

    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database")
    result = run_main("graders", "list", db=junk)
    # a file that is not a library is the user's input: one sentence, exit 2 (locked or full stay 1)
    assert result.returncode == 2 and "not a database" in result.stderr and "Traceback" not in result.stderr

    newer = tmp_path / "newer.sqlite"
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = run_main("graders", "list", db=newer)
    assert result.returncode == 1 and "newer Grader Studio" in result.stderr and "Traceback" not in result.stderr
