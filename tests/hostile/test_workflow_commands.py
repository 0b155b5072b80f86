"""Nothing from data or a grader can start a GitHub workflow command in a CI log: every line the CLI
prints passes one guard (``studio/cli/output.py``), and a sample id with a control character or a
line break is refused on import with its line."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from judge_helpers import qa

from studio.cli.output import CommandGuard, workflow_command
from studio.core.datasets.readers import DatasetError, read_dataset
from studio.core.store import Library

SMUGGLED = "boom\n::error file=x.py,line=1::pwned\r::add-mask::hunter2\n  ::stop-commands::t\n##[set-env]x"


def commands_in(text: str) -> list[str]:
    """Lines GitHub's runner would read as workflow commands (it splits at LF, CR and CRLF)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def test_the_guard_defuses_every_line_however_it_is_written() -> None:
    out = io.StringIO()
    guard = CommandGuard(out)  # type: ignore[arg-type]
    print(SMUGGLED, file=guard)  # type: ignore[arg-type]
    for ch in "\n:" ":error::split across writes\n":  # one character per write
        guard.write(ch)
    guard.write("ok: a colon later in a line :: stays\n")
    guard.flush()
    assert commands_in(out.getvalue()) == []
    assert "\\::error file=x.py,line=1::pwned" in out.getvalue()
    assert "ok: a colon later in a line :: stays\n" in out.getvalue()


def test_only_the_studios_own_annotations_pass() -> None:
    out = io.StringIO()
    guard = CommandGuard(out)  # type: ignore[arg-type]
    workflow_command("::warning title=t::sample 1: bad", guard)  # type: ignore[arg-type]
    assert out.getvalue() == "::warning title=t::sample 1: bad\n"


def test_a_grader_error_prints_no_command(tmp_path: Path) -> None:
    # a child process: the sandbox's mode is read once per process, from its PATH
    from tests.conftest import run_cli

    path = tmp_path / "evil.py"
    path.write_text(f"async def grade(thread):\n    raise ValueError({SMUGGLED!r})\n")
    # without bubblewrap (CI's second pass hides it) the CLI refuses grader code before running it:
    # the refusal is what shows, and it too must print no command
    runs = shutil.which("bwrap") is not None
    for args in (("validate", str(path)), ("graders", "create", str(path))):
        result = run_cli(*args, db=tmp_path / "library.sqlite")
        shown = result.stdout + result.stderr
        if runs:
            assert "pwned" in shown, result  # the error is shown ...
        else:
            assert "bubblewrap is not available" in shown, result
        assert commands_in(shown) == [], shown  # ... but as text


def test_a_stored_sample_id_with_a_line_break_prints_no_command(cli, library: Library) -> None:  # type: ignore[no-untyped-def]
    from studio.core.models import BuiltinGrader

    evil = "s1\n::error file=evil.py,line=1::forged"
    library.datasets.create("d", [qa(evil, "q", "a", "a")])  # as a library written before the refusal
    library.graders.create(BuiltinGrader(key="em", function="exact_match"))
    library.close()
    ran = cli("run", "em", "d", "--json")
    assert ran.returncode == 0, ran
    run_id = json.loads(ran.stdout)["id"]
    for args in (("runs", "show", str(run_id), "--sample", evil), ("runs", "show", str(run_id)),
                 ("datasets", "show", "d")):
        result = cli(*args)
        assert commands_in(result.stdout + result.stderr) == [], (args, result)


@pytest.mark.parametrize("sample_id", ["a\\n::error file=evil.py::x", "a\\rb", "a\\u001bb", "a\\u2028b", "a\\u0085b"])
def test_a_control_character_in_a_sample_id_is_refused_with_its_line(tmp_path: Path, sample_id: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "ok", "input": "q", "completion": "a"}\n'
                    f'{{"id": "{sample_id}", "input": "q", "completion": "a"}}\n')
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 2 and "control character" in caught.value.message
