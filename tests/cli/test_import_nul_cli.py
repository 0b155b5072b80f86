"""A NUL in an imported grader file is refused with its file and line on SQLite and PostgreSQL alike
(PostgreSQL's text holds none: the import failed there in the database, after what came before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def test_a_nul_in_a_grader_file_is_refused_with_its_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "suite.yaml"
    path.write_text('name: s\ndataset: d.jsonl\ntarget:\n  kind: letta_code\ngraders:\n  fine:\n    kind: tool\n'
                    '    function: contains\n  bad:\n    kind: tool\n    function: contains\n'
                    '    display_name: "bad\\0name"\n', encoding="utf-8")
    result = cli("import", str(path))
    assert result.returncode == 1, result
    assert f"{path}:12: grader 'bad' holds a NUL character" in result.stderr, result.stderr
    assert "could not be used" not in result.stderr and "Traceback" not in result.stderr
    listed = cli("graders", "list", "--json")
    assert json.loads(listed.stdout) == []  # not the first one either
