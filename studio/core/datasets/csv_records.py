"""A CSV file read strictly, a record at a time, each named by the physical line it starts on.

Python's csv module reads what is not CSV without a word: a quote left open makes a value that
runs on over the following lines (to the end of the file, or to the next quote), so three rows
come back as two, the second holding the third; a quote in the middle of an unquoted value is kept
as text; a row with fewer values than the header is filled with nothing. A dataset read that way is
half-read, so the rule here is the format's own (RFC 4180, the dialect every spreadsheet writes):

- a value is either unquoted (no quote, no line break) or quoted whole, with a quote inside it
  doubled; only a quoted value may hold line breaks;
- a quote still open at the end of the file, text after a closing quote, a quote inside an
  unquoted value: refused;
- every record has exactly as many values as the header has columns (blank lines are skipped);
- no value or record runs on past a bound (csv's own field limit, ``max_line`` for a record);
- no NUL character (no text the library stores may hold one).

Each refusal is a ``CsvRefused``: the line the broken record starts on and one sentence.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from typing import TextIO


def nul(where: str) -> str:
    """The sentence for a NUL character ``where`` (e.g. "at column 4") in any file data is read from:
    PostgreSQL's text holds none and SQLite's C tools cut a value at it, so it is refused where it
    enters, with its line, on every database alike."""
    return f"a NUL character (\\x00) {where}: no text the library stores may hold one; remove it"

#: a value as the format writes it: quoted whole (a quote inside doubled), or unquoted without a
#: quote or line break; possessive, so a long value is matched once, never backtracked over
_VALUE = r'(?:"(?:[^"]++|"")*+"|[^",\r\n]*+)'
_RECORD = re.compile(rf"{_VALUE}(?:,{_VALUE})*+")
_ONE_VALUE = re.compile(_VALUE)


class CsvRefused(ValueError):
    """A CSV file that is not read: ``line`` is where the broken record starts (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        self.line, self.message = line, message
        super().__init__(f"line {line}: {message}")


class _Lines:
    """The file's lines (split as csv splits them: at \\n, \\r\\n or \\r), numbered; the lines of
    the record being read are held (``take`` hands them over) so that a record's own text can be
    checked and its first line named. A line, or a record's lines together, longer than ``limit``
    characters is refused once that much is read, never read whole."""

    def __init__(self, handle: TextIO, limit: int) -> None:
        self.handle, self.limit = handle, limit
        self.number = 0     # the last line read
        self.held: list[str] = []
        self.size = 0       # characters held

    def __iter__(self) -> Iterator[str]:
        readline, limit = self.handle.readline, self.limit
        while line := readline(limit + 3):  # the bound, a line break ("\r\n"), one more to know it is longer
            self.number += 1
            self.held.append(line)
            self.size += len(line)
            if self.size > limit and len(line.rstrip("\r\n")) + self.size - len(line) > limit:
                first = self.number - len(self.held) + 1
                if len(self.held) == 1:
                    raise CsvRefused(first, f"the line is longer than {_mb(limit)} (a CSV row is at most that long)")
                raise CsvRefused(first, f"the record that starts on this line runs on past {_mb(limit)} (to line "
                                        f"{self.number}); is a quote left open?")
            yield line

    def take(self) -> list[str]:
        held, self.held, self.size = self.held, [], 0
        return held


def _mb(size: int) -> str:
    return f"{size // (1024 * 1024)} MB" if size >= 1024 * 1024 else f"{size:,} characters"


def csv_records(handle: TextIO, max_line: int) -> Iterator[tuple[int, dict[str, str]]]:
    """(the line a record starts on, {column: value}) for every record after the header of ``handle``
    (a text file opened with ``newline=""``); ``CsvRefused`` at the first record that is not CSV
    (see the module docstring). Nothing is yielded for a record before it is checked whole."""
    lines = _Lines(handle, max_line)
    reader = csv.reader(lines, strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for values in reader:
            held = lines.take()
            if len(held) == 1 and not held[0].strip():  # a blank line (or one of spaces) is no record
                start = lines.number + 1
                continue
            _check(held, start)
            if header is None:
                header = _header(values, start)
            elif len(values) != len(header):
                raise CsvRefused(start, _count(len(values), len(header), len(held)))
            else:
                yield start, dict(zip(header, values, strict=True))
            start = lines.number + 1
    except csv.Error as exc:
        raise CsvRefused(start, _csv_error(str(exc), start, lines.number)) from None
    if header is None:
        raise CsvRefused(1, "the CSV file has no header row")


def _header(values: list[str], line: int) -> list[str]:
    seen: dict[str, int] = {}
    for column, name in enumerate(values, 1):
        if name and name in seen:
            raise CsvRefused(line, f"the header names the column {name!r} twice (columns {seen[name]} and {column}), "
                                   "so one of its values would be lost")
        seen[name] = column
    return values


def _count(got: int, want: int, lines: int) -> str:
    across = f", a quoted value spanning {lines} lines" if lines > 1 else ""
    hint = "; is a value holding a comma not quoted?" if got > want else ""
    return f"{'more' if got > want else 'fewer'} values ({got}{across}) than the header has columns ({want}){hint}"


def _check(held: list[str], start: int) -> None:
    """What csv's strict mode lets through in one record's text: a NUL, a quote in an unquoted value."""
    for n, line in enumerate(held):
        if "\x00" in line:
            raise CsvRefused(start, nul(f"at {_at(start, start + n, line.index(chr(0)))}"))
    if not any('"' in line for line in held):
        return
    text = "".join(held).rstrip("\r\n")
    if _RECORD.fullmatch(text):
        return
    offset = _stray_quote(text)
    n = 0  # the physical line (of the record's) and column of the offset
    while offset >= len(held[n]) and n + 1 < len(held):
        offset -= len(held[n])
        n += 1
    line = held[n]
    lead = line[line.rfind(",", 0, offset) + 1:offset]  # the value's text before the quote
    if lead and not lead.strip():
        what, why = "a space before the quote that opens a value", "a quoted value starts right after its comma"
    else:
        what = "a quote inside a value that is not quoted"
        why = 'a value holding a quote is quoted whole, the quote doubled: "say ""hi"""'
    raise CsvRefused(start, f"not valid CSV: {what} at {_at(start, start + n, offset)} ({why})")


def _at(start: int, line: int, offset: int) -> str:
    return f"column {offset + 1}" if line == start else f"line {line}, column {offset + 1}"


def _stray_quote(text: str) -> int:
    """The offset of the first quote that is not where a value's quoting allows one."""
    pos = 0
    while True:
        found = _ONE_VALUE.match(text, pos)
        end = found.end() if found else pos
        if end < len(text) and text[end] == ",":
            pos = end + 1
            continue
        return end


def _csv_error(text: str, start: int, last: int) -> str:
    """csv's own error (strict mode) in a sentence about the record starting on line ``start``."""
    to = f" (to line {last})" if last > start else ""
    if "unexpected end of data" in text:
        return (f"not valid CSV: a quote opened in the record that starts on this line is never closed (the value "
                f"runs on to the end of the file, line {last}); a quote inside a quoted value is doubled: \"\"")
    if "expected after" in text:
        where = f" on line {last}" if last > start else ""
        return (f"not valid CSV: text follows a closing quote{where} before the next comma; is a quote left open? "
                "(a quote inside a quoted value is doubled: \"\")")
    if "field larger than field limit" in text:
        limit = csv.field_size_limit()
        open_quote = "; is a quote left open?" if last > start else ""
        return f"a value is longer than {limit // 1024} kB, the longest CSV value read{to}{open_quote}"
    return f"not valid CSV ({text})"
