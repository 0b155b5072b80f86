"""The headless face of the studio: ``grader-studio [--db PATH] COMMAND ...``.

Each command group lives in its own module with a ``register(subparsers)`` function; handlers take
``(args, app: CliApp)`` and return the exit code: 0 ok, 1 a grader/validation failed or the library
refused, 2 usage error. With no command the window opens.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from .app import CliApp, CliError

# One module per command group; a module that cannot import yet is skipped, not fatal.
COMMAND_MODULES: tuple[str, ...] = (
    "studio.cli.graders",
    "studio.cli.datasets",
    "studio.cli.validate",
    "studio.cli.runs",
    "studio.cli.sandbox",
    "studio.cli.endpoints",
    "studio.cli.judging",
    "studio.cli.transfer",
    "studio.cli.demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grader-studio",
        description="Author, try and ship LLM graders. Without a command, opens the studio window.",
    )
    parser.add_argument("--db", metavar="PATH", help="library file (default: $GRADER_STUDIO_DB or the user data dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    app = CliApp(db=args.db)
    if args.command is None:
        from studio.ui import launch

        return launch(app.db_path())
    try:
        return int(args.func(args, app) or 0)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    finally:
        app.close()


if __name__ == "__main__":
    sys.exit(main())
