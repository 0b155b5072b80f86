"""The one place every line the CLI prints passes: no line it produces can be a GitHub workflow command.

A CI log is read by GitHub's runner line by line (a line ends at LF, CR or CRLF), and a line whose
text, after leading blanks, starts with ``::`` is a command to it (``::error``, ``::add-mask``,
``::stop-commands``), as is one holding ``##[`` (the runner's older syntax). Sample ids, grader
errors, rationales and file names are data, and data may hold line breaks: rather than trust every
print to escape them, ``main`` wraps stdout and stderr in ``CommandGuard``, which writes such a line
with a backslash before its ``::`` (and ``##\\[`` for ``##[``), so the runner reads it as text.
The ``--github`` annotations the studio means to give are the only lines written past the guard,
through ``workflow_command`` or, for a run's report, ``engine/request.py`` writing to ``unguarded`` (their
values are escaped by ``engine/reports/github.py``).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

from studio.core.outside import printable

_BLANKS = " \t\f\v"
#: a line break, the next line's leading blanks, then ``::``
_COMMAND_AFTER_BREAK = re.compile(r"([\r\n][ \t\f\v]*)::")


#: the studio's own colours (``tables.paint``: SGR only), the one escape sequence let through; an
#: answer holding one changes a colour at most (no cursor, title, clipboard or link sequence)
_OWN_COLOUR = re.compile(r"\x1b\[(?:0|1|3[1-4]|90)m")
#: a carriage return the studio writes itself: at the start of a write (a progress line redrawn)
#: or before a line feed; any other one would let a sample overwrite what was printed before it
_STRAY_CR = re.compile(r"(?<!^)\r(?!\n)")


def _visible(text: str) -> str:
    """``text`` with every control character made visible (``outside.printable``) but the
    studio's own colours, TAB, line feeds and its own carriage returns."""
    if "\r" in text:
        text = _STRAY_CR.sub("\u240d", text)
    if "\x1b" not in text:
        return printable(text, carriage_returns=True)
    pieces = _OWN_COLOUR.split(text)
    out = [printable(pieces[0], carriage_returns=True)]
    for colour, piece in zip(_OWN_COLOUR.findall(text), pieces[1:], strict=True):
        out += [colour, printable(piece, carriage_returns=True)]
    return "".join(out)


def _defuse(text: str, at_line_start: bool) -> str:
    """``text`` written so the runner reads no command in any line of it and a terminal obeys no
    escape sequence from it; ``at_line_start``: its first character begins a line."""
    text = _visible(text)
    if at_line_start and (text.startswith("::") or (text[:1] in _BLANKS and text.lstrip(_BLANKS).startswith("::"))):
        body = text.lstrip(_BLANKS)
        text = text[:len(text) - len(body)] + "\\" + body
    if "::" in text:
        text = _COMMAND_AFTER_BREAK.sub(r"\1\\::", text)
    if "##[" in text:
        text = text.replace("##[", "##\\[")
    return text


class CommandGuard:
    """A text stream over ``stream`` that defuses each line (see the module docstring). The start of
    a line is held back only while it could still become ``::`` (blanks, or blanks and one ``:``)."""

    def __init__(self, stream: TextIO) -> None:
        self.unguarded = stream
        self._held = ""  # the current line's undecided start, not yet written
        self._at_start = True  # the next character written begins a line

    def write(self, text: str) -> int:
        size = len(text)
        if not text:
            return 0
        at_start = self._at_start
        if self._held:
            text, self._held = self._held + text, ""
        elif text[-1] in "\r\n":  # the common case (a whole line, or print's newline): nothing to hold
            self._at_start = True
            self.unguarded.write(_defuse(text, at_start))
            return size
        last_break = max(text.rfind("\n"), text.rfind("\r"))
        tail = text[last_break + 1:]
        if (last_break >= 0 or at_start) and tail.lstrip(_BLANKS) in ("", ":"):
            self._held, text = tail, text[:last_break + 1]
            self._at_start = True
        else:
            self._at_start = False
        if text:
            self.unguarded.write(_defuse(text, at_start))
        return size

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._held and not self._held.strip(_BLANKS):  # blanks decide nothing: out they go
            self.unguarded.write(self._held)
            self._held = ""
        self.unguarded.flush()

    def close_guard(self) -> None:
        """Write what is still held (a line that ended with the command's end: nothing follows)."""
        if self._held:
            self.unguarded.write(self._held)
            self._held = ""
        self.unguarded.flush()

    def __getattr__(self, name: str) -> object:  # encoding, isatty, fileno, buffer ... of the real stream
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
    sys.stdout, sys.stderr = CommandGuard(sys.stdout), CommandGuard(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if isinstance(stream, CommandGuard):
                    stream.close_guard()
                else:
                    stream.flush()
        # a command that replaced a stream itself (os.devnull after a broken pipe) keeps its choice
        if isinstance(sys.stdout, CommandGuard):
            sys.stdout = saved[0]
        if isinstance(sys.stderr, CommandGuard):
            sys.stderr = saved[1]
