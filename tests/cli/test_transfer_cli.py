"""export / import from the command line: files written, refusals explained, graders come back."""

from __future__ import annotations

import json
from pathlib import Path


def test_export_import_round_trip(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("demo").returncode == 0
    out = tmp_path / "openai"
    exported = cli("export", "qa-contains-expected", "--to", "openai", "-o", str(out / "exact.json"))
    # written, but a string_check holds no name, description, tags or metric: exit 3 names each field
    assert exported.returncode == 3, exported.stderr
    assert "not carried: qa-contains-expected: description, metric, name, options, tags" in exported.stderr
    payload = json.loads((out / "exact.json").read_text())
    assert payload["type"] == "string_check"

    refused = cli("export", "rag-faithfulness", "--to", "openai")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr and refused.stderr.strip()

    everything = cli("export", "--all", "--to", "adaptive", "-o", str(tmp_path / "adaptive"))
    assert everything.returncode == 3 and "not carried:" in everything.stderr, everything.stderr
    written = sorted(p.name for p in (tmp_path / "adaptive").rglob("*") if p.is_file())
    assert written, everything.stdout
    text = "".join(p.read_text() for p in (tmp_path / "adaptive").rglob("*") if p.is_file())
    assert str(tmp_path) not in text and "/root" not in text and "/home/" not in text

    assert cli("graders", "delete", "qa-contains-expected").returncode == 0
    imported = cli("import", str(out / "exact.json"))
    assert imported.returncode == 0, imported.stderr
    shown = json.loads(cli("graders", "show", "qa-contains-expected", "--json").stdout)
    assert shown["kind"] == "builtin" and shown["version"] == 2  # recreated: its history continues


def test_import_unknown_file_is_a_clear_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": "world"}')
    result = cli("import", str(junk))
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr and result.stderr.strip()
