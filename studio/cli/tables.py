"""Tables and colour for people at a terminal: a table never wider than the terminal, colour only there.

A wrapped table is unreadable, so ``fit`` shrinks the long-text columns (each marked ``flexible``)
until the rows fit the width, cutting cells with "…"; scripts read ``--json``, which is never cut.
Colour is used only when the stream is a terminal and ``NO_COLOR`` is unset (https://no-color.org),
and it is added after padding, so escape codes never count towards a column's width.
"""

from __future__ import annotations

import os
import shutil
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from studio.core.outside import printable

GAP = "  "
MIN_FLEX = 6  # a long-text column cut narrower than this says nothing
ELLIPSIS = "…"

_CODES = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "grey": "90", "bold": "1"}
#: the colour of each result word a reviewer scans for
STATUS_COLOURS = {"ok": "green", "PASS": "green", "completed": "green", "error": "red", "FAIL": "red",
                  "failed": "red", "invalid": "yellow", "cancelled": "yellow", "interrupted": "yellow",
                  "running": "blue", "skipped": "grey", "NA": "grey"}


def terminal_width(stream: TextIO | None = None) -> int:
    """The terminal's columns (``COLUMNS`` wins, as for every tool); 80 when not a terminal."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    stream = stream or sys.stdout
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        return shutil.get_terminal_size((80, 24)).columns


def use_colour(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set to anything."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def paint(text: str, colour: str | None, on: bool) -> str:
    if not on or not colour or not text:
        return text
    return f"\x1b[{_CODES[colour]}m{text}\x1b[0m"


def width_of(text: str) -> int:
    """Columns a string takes on a terminal (wide CJK characters take two, combining marks none)."""
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def one_line(text: object) -> str:
    """A cell is one line: newlines and runs of blanks collapse to one space, and control
    characters are made visible here (``outside.printable``), before the cell's width is measured."""
    return printable(" ".join(("" if text is None else str(text)).split()))


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, ending in "…" when it was cut."""
    if width_of(text) <= width:
        return text
    if width <= 0:
        return ""
    out, used = [], 0
    for char in text:
        w = width_of(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out).rstrip() + ELLIPSIS


@dataclass(frozen=True)
class Column:
    title: str
    flexible: bool = False  # long text: shrinks first, cut with "…"
    right: bool = False     # numbers line up on the right
    colour: bool = False    # cells are status words, coloured by STATUS_COLOURS


def fit(widths: list[int], columns: Sequence[Column], total: int) -> list[int]:
    """Column widths that fit ``total`` columns: flexible columns shrink first, widest first, down to
    ``MIN_FLEX``; then the others, down to their title's width; last, every column to one character."""
    widths = list(widths)

    def used() -> int:
        return sum(widths) + len(GAP) * (len(widths) - 1)

    for floor_of in (lambda i: MIN_FLEX if columns[i].flexible else None,
                     lambda i: max(len(columns[i].title), 3),
                     lambda i: 1):
        while used() > total:
            candidates = [i for i in range(len(widths))
                          if floor_of(i) is not None and widths[i] > floor_of(i)]  # type: ignore[operator]
            if not candidates:
                break
            widest = max(candidates, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths


def render(rows: Sequence[Sequence[object]], columns: Sequence[Column], *, width: int | None = None,
           colour: bool = False) -> list[str]:
    """The table's lines, none wider than ``width`` (the terminal's by default)."""
    total = terminal_width() if width is None else width
    cells = [[one_line(c) for c in row] for row in rows]
    natural = [max([width_of(col.title)] + [width_of(row[i]) for row in cells]) for i, col in enumerate(columns)]
    widths = fit(natural, columns, total)

    def line(values: Sequence[str], head: bool) -> str:
        parts = []
        for value, col, w in zip(values, columns, widths, strict=True):
            text = cut(value, w)
            pad = " " * (w - width_of(text))
            shown = paint(text, "bold" if head else STATUS_COLOURS.get(text) if col.colour else None, colour)
            parts.append(pad + shown if col.right and not head else shown + pad)
        return GAP.join(parts).rstrip()

    lines = [line([c.title for c in columns], True), GAP.join("-" * w for w in widths)]
    lines += [line(row, False) for row in cells]
    return lines


def print_table(rows: Sequence[Sequence[object]], columns: Sequence[Column], stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    for text in render(rows, columns, width=terminal_width(stream), colour=use_colour(stream)):
        stream.write(text + "\n")
