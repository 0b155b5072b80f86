"""Shared plumbing of the CLI handlers: the library, JSON output, errors that become exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from studio.core.store.library import Library


class CliError(Exception):
    """A refusal or failure reported as one line on stderr with an exit code (1 by default)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def library_refusal(
    func: Callable[[argparse.Namespace, CliApp], int],
) -> Callable[[argparse.Namespace, CliApp], int]:
    """Library refusals (locked, missing, conflict) become one line on stderr and exit 1."""
    from studio.core.store import LibraryError

    def wrapper(args: argparse.Namespace, app: CliApp) -> int:
        from studio.core.store.errors import LibraryUnreachable

        try:
            return func(args, app)
        except LibraryUnreachable as exc:  # a bad URL, a server down: the library was never opened
            raise CliError(str(exc), 2) from None
        except LibraryError as exc:
            raise CliError(str(exc)) from None

    return wrapper


class CliApp:
    def __init__(self, db: str | None = None) -> None:
        self._db = db
        self._library: Library | None = None

    def db_path(self) -> Path | str:
        """The library's file, or its server URL (which may hold a password: see ``where``)."""
        from studio.core.store.location import resolve_db

        return resolve_db(self._db)

    def where(self) -> str:
        """The library as a person reads it (a server URL without its password)."""
        from studio.core.store.location import display

        return display(self.db_path())

    @property
    def library(self) -> Library:
        if self._library is None:
            from studio.core.store.library import Library

            self._library = Library.open(self.db_path())
        return self._library

    def close(self) -> None:
        if self._library is not None:
            self._library.close()
            self._library = None

    @staticmethod
    def print_json(data: Any) -> None:
        json.dump(data, sys.stdout, indent=2, default=str, ensure_ascii=False)
        sys.stdout.write("\n")

    @staticmethod
    def print_table(rows: list[list[Any]], headers: list[str]) -> None:
        """Aligned plain-text table for people; scripts use --json."""
        cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
        for n, row in enumerate(cells):
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                print("  ".join("-" * w for w in widths))


def add_json_flag(parser: Any) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
