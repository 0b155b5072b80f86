"""The hostile corpus (tests/hostile/corpus/): each file a grader that attacks, its expectations in
header lines (``# expect: error``, ``# message: ...``, ``# contract: promptfoo``, ``# needs:
audit-hook bypass``, ``# timeout: 30``). ``corpus_grader`` makes the grader every hostile test runs
of a file, so that they all read its headers alike."""

from __future__ import annotations

from pathlib import Path

from studio.core.models import FunctionGrader

CORPUS = Path(__file__).parent / "hostile" / "corpus"
#: the documented bypass of in-process defences, prepended to a file that says it needs it
BYPASS = (Path(__file__).parent / "hostile" / "audit_hook_bypass.py").read_text()


def header(source: str, key: str) -> str | None:
    """The value of the file's ``# key: value`` line (None without one)."""
    for line in source.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def corpus_grader(source: str, key: str) -> FunctionGrader:
    """``source`` as a sandboxed function grader: the audit-hook bypass prepended where the file
    needs it, its contract (adaptive unless named), 256 MB, and 1 s of wall clock unless the file
    says otherwise (a grader whose expected end is the memory limit must meet that limit first,
    also on a loaded machine: ``# timeout: 30``)."""
    if header(source, "needs") == "audit-hook bypass":
        source = BYPASS + "\n" + source
    return FunctionGrader(key=key, source=source, contract=header(source, "contract") or "adaptive",  # type: ignore[arg-type]
                          timeout_seconds=float(header(source, "timeout") or 1), memory_mb=256)
