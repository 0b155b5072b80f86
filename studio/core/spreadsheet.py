"""CSV cells that a spreadsheet opens as text, never as a formula (OWASP's "CSV injection").

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula (or
becomes one) in Excel, LibreOffice and Google Sheets; a sample's output or a judge's rationale is
data an attacker can shape, so such a cell gets a leading ``'``, which every one of them reads as
"this is text" and does not show. Numbers written as numbers are left alone (``-0.5`` is a score).
Machine readers that want the exact text ask for ``raw`` (``--raw-csv``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from typing import TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: object) -> object:
    """``value`` with a leading ``'`` when it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class CsvWriter:
    """``csv.writer`` whose text cells are escaped unless ``raw``."""

    def __init__(self, out: TextIO, *, raw: bool = False) -> None:
        self._writer = csv.writer(out)
        self.raw = raw

    def writerow(self, row: Iterable[object]) -> None:

        self._writer.writerow(list(row) if self.raw else [escape_cell(v) for v in row])


class CsvDictWriter:
    """``csv.DictWriter`` whose text cells (and header) are escaped unless ``raw``."""

    def __init__(self, out: TextIO, fieldnames: list[str], *, raw: bool = False) -> None:
        self._writer = CsvWriter(out, raw=raw)
        self.fieldnames = fieldnames

    def writeheader(self) -> None:
        self._writer.writerow(self.fieldnames)

    def writerow(self, row: Mapping[str, object]) -> None:
        self._writer.writerow(row.get(k, "") for k in self.fieldnames)
