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


def test_what_export_writes_import_reads_back_or_the_loss_is_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: the OpenAI eval that export --dataset writes imports back; a lone OpenAI judge names
    what it does not carry (exit 3); a HUD module imports back the same grader."""
    assert cli("demo").returncode == 0
    out = tmp_path / "eval"
    done = cli("export", "qa-correctness-judge", "--to", "openai", "--dataset", "qa", "--model", "gpt-4o-mini",
               "-o", str(out))
    assert done.returncode == 3, done.stderr
    lost = next(line for line in done.stderr.splitlines() if line.startswith("not carried: qa-correctness-judge:"))
    assert all(field in lost for field in ("name", "description", "tags", "endpoint"))
    for extra in ([], ["--from", "openai"]):
        back = cli("import", str(out / "qa.eval.json"), "--dry-run", *extra)
        assert back.returncode == 1 and "would refuse qa-correctness-judge (binary_judge)" in back.stdout, back.stderr

    single = cli("export", "qa-correctness-judge", "--to", "openai", "--model", "gpt-4o-mini", "-o",
                 str(tmp_path / "judge.json"))
    assert single.returncode == 3 and "not carried: qa-correctness-judge: description, endpoint" in single.stderr

    hud = tmp_path / "hud"
    assert cli("export", "answer-not-empty", "--to", "hud", "-o", str(hud)).returncode == 0
    before = json.loads(cli("graders", "show", "answer-not-empty", "--json").stdout)
    assert cli("graders", "delete", "answer-not-empty").returncode == 0
    module = next(hud.glob("*_hud.py"))
    assert cli("import", str(module)).returncode == 0
    after = json.loads(cli("graders", "show", "answer-not-empty", "--json").stdout)
    assert after["definition"] == before["definition"]
