"""The headless face of the studio: ``grader-studio [--db PATH] COMMAND ...``.

Each command group lives in its own module with a ``register(subparsers)`` function; handlers take
``(args, app: CliApp)`` and return the exit code: 0 ok, 1 a grader/validation failed or the library
refused, 2 usage error (or a run that could not be done), 70 a bug. Handlers do not translate errors:
``main`` prints every ``StudioError`` as its sentence, once, with its exit status, and anything else
as a bug whose traceback is written to a file it names. With no command the window opens.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import NoReturn, TypeVar, overload

from studio import __version__
from studio.core.errors import StudioError, bug_report

from .app import COMMAND_HELP, CliApp, CliError, pause_gc, resume_gc

# Which module holds each command: only the module of the command being run is imported, so
# `grader-studio run ...` does not pay for the judges', platforms' or window's imports.
COMMANDS: dict[str, str] = {
    "graders": "studio.cli.graders",
    "suites": "studio.cli.suites",
    "datasets": "studio.cli.datasets",
    "validate": "studio.cli.validate",
    "schema": "studio.cli.validate",
    "run": "studio.cli.runs",
    "runs": "studio.cli.runs",
    "sandbox-info": "studio.cli.sandbox",
    "endpoints": "studio.cli.endpoints",
    "render": "studio.cli.judging",
    "fake-judge": "studio.cli.judging",
    "local-judge": "studio.cli.local_judge",
    "export": "studio.cli.transfer",
    "import": "studio.cli.transfer",
    "demo": "studio.cli.demo",
    "labels": "studio.cli.labels",
    "agreement": "studio.cli.agreement",
    "compare": "studio.cli.agreement",
    "align": "studio.cli.agreement",
    "probe": "studio.cli.probe",
    "generate": "studio.cli.generate",
    "library": "studio.cli.library",
    "queues": "studio.cli.queues",
}


def _command_in(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (skipping ``--db PATH``), if it names a known command."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--db":
            skip = True
        elif not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


_N = TypeVar("_N")
#: a negative number as Python's float() reads it: -3, -0.5, -.5, -1e-3, -2.5E+4, -inf, -nan
_NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|infinity|nan)$", re.IGNORECASE)


class CommandParser(argparse.ArgumentParser):
    """A parser that refuses an argument it does not know itself, with its own usage: argparse
    leaves a subcommand's unknown options to the top parser, which then printed the top-level usage
    (``grader-studio [-h] ... COMMAND``) for ``runs show 1 --bogus``. Subparsers take this class
    from their parent, so every level answers for its own arguments."""

    # argparse's overloads: the result is typed by the namespace passed in
    @overload
    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: None = None) -> tuple[argparse.Namespace, list[str]]: ...

    @overload
    def parse_known_args(self, args: Iterable[str] | None, namespace: _N) -> tuple[_N, list[str]]: ...

    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...

    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: _N | None = None) -> tuple[_N | argparse.Namespace, list[str]]:
        # argparse takes a value that starts with '-' for an option unless it looks like a negative
        # number, and its test knows no exponent or infinity: `--pass-threshold -1e-3` was refused
        # as "expected one argument" and `-inf` never reached the request's own sentence. No option
        # of the studio's is spelled like a number, so every such word is a value (each level's
        # parser passes here, a subcommand's too)
        self._negative_number_matcher = _NEGATIVE_NUMBER
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """argparse's usage error, with any URL it quotes back masked (a library URL put in the
        wrong place carries its password: docs/security.md)."""
        from studio.core.urls import mask_urls

        super().error(mask_urls(message))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="grader-studio",
        description="Author, try and ship LLM graders. Without a command, opens the studio window.",
    )
    parser.add_argument("--version", action="version", version=f"grader-studio {__version__}")
    parser.add_argument("--db", metavar="PATH|URL",
                        help="library file, or a team's postgresql://USER@HOST:PORT/DB (docs/team.md; "
                             "default: $GRADER_STUDIO_DB or the user data dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = _command_in(argv) if argv is not None else None
    if command is None and argv is not None:
        # no command word (--help, --version, the window): each command's one line, no module imported,
        # so `grader-studio --help` pays for no SQLAlchemy, scipy or judge (bench/startup.py)
        for name in COMMANDS:
            sub.add_parser(name, help=COMMAND_HELP[name], add_help=False)
        return parser
    modules = [COMMANDS[command]] if command else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command, every line it prints passing the workflow-command guard (``output.py``)."""
    from .output import guarded_output

    if argv is None:  # the process's own command line (app.pause_gc)
        pause_gc()
        # the studio uses no pydantic plugin: without this, the first model a command builds scans
        # every installed distribution's entry points for one (~13 ms of a judge run's start-up,
        # bench/README section 10), and a plugin found would see every value the studio validates.
        # A value the user set wins (setdefault).
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        with guarded_output():
            return _main(list(sys.argv[1:] if argv is None else argv))
    finally:
        resume_gc()


def _main(argv: list[str]) -> int:
    from .listing import lean_list

    listed = lean_list(argv)  # `graders list` without the library layer's imports, when it can
    if listed is not None:
        return listed
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.command != "run":  # a run ends its start-up when grading begins (runs.py: _run)
        resume_gc()
    app = CliApp(db=args.db)
    try:
        if args.command is None:
            from studio.ui import launch

            return launch(app.db_path())
        return int(args.func(args, app) or 0)
    except StudioError as exc:  # every sentence a person can act on, from any command: printed here once
        print(f"error: {exc}", file=sys.stderr)
        return exit_status(exc, args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0
    except Exception as exc:
        from sqlalchemy.exc import DBAPIError

        if isinstance(exc, DBAPIError):  # the file itself: locked by another program, not a database, disk full
            from studio.core.store.database import damaged

            text = str(exc.orig).strip()
            reason = text.splitlines()[0] if text else type(exc.orig).__name__
            print(f"error: the library {app.where()} could not be used: {app.masked(reason)}", file=sys.stderr)
            return 2 if damaged(exc) else 1  # a damaged or cut file is bad input; locked or full, try again
        print(f"error: {bug_report(exc)}", file=sys.stderr)
        return EXIT_BUG
    finally:
        app.close()


#: a bug of ours (anything but a ``StudioError``): the sentence names the traceback's file
EXIT_BUG = 70


def exit_status(exc: StudioError, args: argparse.Namespace) -> int:
    """A ``CliError``'s own status, else its class's (``StudioError.exit_code``), else the command's
    (``run`` and ``runs report`` refuse with 2: the run could not be done), else 1."""
    if isinstance(exc, CliError):
        return exc.code
    if exc.exit_code is not None:
        return exc.exit_code
    return int(getattr(args, "refusal_code", 1))


if __name__ == "__main__":
    sys.exit(main())
