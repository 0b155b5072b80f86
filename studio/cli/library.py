"""``grader-studio library``: the library as a whole (copy it between SQLite and PostgreSQL, say
which one is in use). A team's shared library: docs/team.md."""

from __future__ import annotations

import argparse
import sys

from .app import COMMAND_HELP, CliApp, CliError
from .parsers import Subparsers


def cmd_copy(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.copy import copy_library
    from studio.core.store.library import Library
    from studio.core.store.location import display, is_server_url, resolve_db

    source_at, target_at = resolve_db(args.source), resolve_db(args.target)
    if not is_server_url(source_at) and not source_at.is_file():  # type: ignore[union-attr]
        raise CliError(f"no library at {display(source_at)}: name an existing file or a postgresql:// URL", 2)
    if display(source_at) == display(target_at):
        raise CliError("the source and the destination are the same library", 2)
    with Library.open(source_at) as source, Library.open(target_at) as target:
        report = copy_library(source, target)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"copied {report.sentence()} from {display(source_at)} to {display(target_at)}")
    return 0


def cmd_info(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.authors import current_user

    library = app.library
    kind = "PostgreSQL" if library.is_server else "SQLite"
    print(f"{kind} library at {library.where}; writing as {current_user()}")
    return 0


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("library", help=COMMAND_HELP["library"])
    lsub = parser.add_subparsers(dest="library_command", metavar="ACTION", required=True)
    p = lsub.add_parser("copy", help="copy a whole library between SQLite and PostgreSQL (into an empty one)")
    p.add_argument("source", metavar="SRC", help="a library file or postgresql://USER@HOST:PORT/DB")
    p.add_argument("target", metavar="DST", help="a new library file or an empty PostgreSQL database")
    p.set_defaults(func=cmd_copy)
    p = lsub.add_parser("info", help="which library is in use and who is writing")
    p.set_defaults(func=cmd_info)
