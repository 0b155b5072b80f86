"""The one place every line the CLI prints passes: no line it produces can be a GitHub workflow command.

A CI log is read by GitHub's runner line by line (a line ends at LF, CR or CRLF), and a line whose
text, after leading blanks, starts with ``::`` is a command to it (``::error``, ``::add-mask``,
``::stop-commands``), as is one holding ``##[`` (the runner's older syntax). Sample ids, grader
errors, rationales and file names are data, and data may hold line breaks: rather than trust every
print to escape them, ``main`` wraps stdout and stderr in ``CommandGuard``, which writes such a line
with a backslash before its ``::`` (and ``##\\[`` for ``##[``), so the runner reads it as text.
The ``--github`` annotations the studio means to give are the only lines written past the guard,
through ``workflow_command`` (their values are escaped by ``engine/reports/github.py``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_BREAKS = ("\r\n", "\n", "\r")
_BLANKS = " \t\f\v"


def _defuse(line: str) -> str:
    """``line`` (no line break in it) written so the runner reads no command in it."""
    body = line.lstrip(_BLANKS)
    if body.startswith("::"):
        line = line[: len(line) - len(body)] + "\\" + body
    return line.replace("##[", "##\\[")


class CommandGuard:
    """A text stream over ``stream`` that defuses each line (see the module docstring). A line's
    start is held back only until it shows whether it begins with ``::``."""

    def __init__(self, stream: TextIO) -> None:
        self.unguarded = stream
        self._line = ""  # the current line's text not yet written (only while it could be a command)
        self._deciding = True  # at a line's start: its first characters are not yet written

    def write(self, text: str) -> int:
        out: list[str] = []
        rest = text
        while rest:
            cut = min((i for i in (rest.find("\n"), rest.find("\r")) if i >= 0), default=-1)
            piece, brk = (rest, "") if cut < 0 else (rest[:cut], rest[cut])
            rest = "" if cut < 0 else rest[cut + 1:]
            if self._deciding:
                self._line += piece
                settled = len(self._line.lstrip(_BLANKS)) >= 2 or brk
                if settled:
                    out.append(_defuse(self._line))
                    self._line, self._deciding = "", False
            else:
                out.append(piece.replace("##[", "##\\["))
            if brk:
                out.append(brk)
                self._deciding = True
        if out:
            self.unguarded.write("".join(out))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._line:  # a line start held back: written as it is decided now
            self.unguarded.write(_defuse(self._line))
            self._line, self._deciding = "", False
        self.unguarded.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer ... of the real stream
        return getattr(self.unguarded, name)


def workflow_command(line: str, stream: TextIO | None = None) -> None:
    """Write one of the studio's own ``--github`` workflow commands past the guard."""
    target = stream or sys.stdout
    target.flush()
    real = getattr(target, "unguarded", target)
    real.write(line.replace("\r", "%0D").replace("\n", "%0A") + "\n")
    real.flush()


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """stdout and stderr behind a ``CommandGuard`` for the length of one command."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CommandGuard(sys.stdout), CommandGuard(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        # a command that replaced a stream itself (os.devnull after a broken pipe) keeps its choice
        if isinstance(sys.stdout, CommandGuard):
            sys.stdout = saved[0]
        if isinstance(sys.stderr, CommandGuard):
            sys.stderr = saved[1]
