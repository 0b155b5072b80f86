"""Shared plumbing of the CLI handlers: the library, JSON output, errors that become exit codes."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.errors import StudioError
from studio.core.outside import printable_json

if TYPE_CHECKING:  # the lean start-up (--help, --version, graders list) imports nothing it does not run
    import argparse
    from collections.abc import Sequence

    from studio.core.json_types import JsonArray, JsonObject
    from studio.core.store.library import Library


_gc_paused = False


def pause_gc() -> None:
    """Start-up without the cyclic garbage collector: the imports of a command (SQLAlchemy,
    pydantic, aiohttp, the studio's modules) allocate some 130,000 objects that live until the
    process ends, and the collector traversed them again and again as they grew (~10% of a judge
    run's start-up CPU: bench/README.md). ``resume_gc`` ends the pause. Only for the process's own
    command line (``main()``): a caller of ``main(argv)`` in its own process (the tests) keeps its
    collector as it was."""
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Start-up is over: what it made is moved out of the collector's way for good (``gc.freeze``:
    never traversed again, as modules and classes need not be), and the collector is back for the
    command's own work (a run's millions of rows, the window)."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


#: each command's one line in ``grader-studio --help``: the lean parser lists them without importing
#: a single command module, and each module's ``register`` names its own from here
COMMAND_HELP: dict[str, str] = {
    'graders': 'list, create, edit, lock, delete and restore graders',
    'suites': 'several graders run together over one dataset',
    'datasets': 'import and browse datasets',
    'validate': "validate a grader file (runs function graders' checks in the sandbox)",
    'schema': 'print the JSON Schema of grader definition files',
    'run': 'run a grader or a suite over a dataset and store the results',
    'runs': 'list, show and export runs',
    'sandbox-info': 'show which sandbox protections are active',
    'endpoints': 'judge endpoints (OpenAI-compatible or Anthropic)',
    'render': 'print the exact prompt(s) a judge sends for one sample',
    'fake-judge': 'serve a scripted OpenAI-compatible judge (not a model) for dry runs',
    'local-judge': 'serve a local model (llama.cpp) as a judge endpoint; needs grader-studio[local]',
    'export': "write graders in a platform's format",
    'import': "create graders from a platform's file",
    'demo': 'add the demo graders, datasets and scripted judge to the library',
    'labels': "human labels of a dataset's samples",
    'agreement': "a run's agreement with human labels (κ, confusion, correlations)",
    'compare': 'run B against run A on the same dataset (per grader for suite runs)',
    'align': "add few-shot examples from a judge's disagreements with labels",
    'probe': "measure a judge's biases: verbosity, reference, position, repeat",
    'generate': "call a model on a dataset's inputs and store its answers as a new dataset",
    'library': 'the library as a whole: copy it, say which one is in use',
    'queues': 'review queues: blind labels by a team, their agreement, settlements',
}

class CliError(StudioError):
    """A refusal of the CLI's own (a bad combination of options ...): one line on stderr and its exit
    status (1 by default; 2 for a run that could not be done). ``main`` prints it, as every other
    ``StudioError``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


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

    def masked(self, text: str) -> str:
        """``text`` (a driver's message) with the library URL's secrets masked, as ``where`` shows it."""
        from studio.core.urls import scrub

        return scrub(text, self.db_path())

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
    def print_json(data: JsonObject | JsonArray) -> None:
        # (raw controls escaped, so the guard has nothing to make visible: the values stay exact)
        sys.stdout.write(printable_json(json.dumps(data, indent=2, default=str, ensure_ascii=False)) + "\n")

    @staticmethod
    def print_table(rows: Sequence[Sequence[object]], headers: list[str]) -> None:
        """Aligned plain-text table for people; scripts use --json."""
        cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
        for n, row in enumerate(cells):
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                print("  ".join("-" * w for w in widths))


def write_or_print(output: str | None, text: str, wrote: str) -> None:
    """``text`` into the file ``output`` (never through a link planted at it), saying "wrote
    ``wrote`` to ``output``" on stderr; to stdout without a file (``-o``/``--output`` left out)."""
    if not output:
        sys.stdout.write(text)
        return
    from studio.core.safe_files import write_text

    try:
        write_text(output, text)
    except OSError as exc:
        raise CliError(f"could not write {output}: {exc.strerror or exc}") from None
    print(f"wrote {wrote} to {output}", file=sys.stderr)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
