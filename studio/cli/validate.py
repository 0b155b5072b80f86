"""``grader-studio validate FILE`` and ``grader-studio schema``: checks a grader before it ships."""

from __future__ import annotations

import argparse
import json

from studio.core.checks import check_definition
from studio.core.models import files as definition_files

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .graders import load_grader_file
from .parsers import Subparsers

_MARKS = {"passed": "ok  ", "failed": "FAIL", "warning": "warn", "skipped": "skip"}


def cmd_validate(args: argparse.Namespace, app: CliApp) -> int:
    try:
        definition = load_grader_file(args.file)
    except CliError as exc:
        if args.json:
            app.print_json({"file": args.file, "ok": False, "checks": [
                {"name": "definition", "status": "failed", "message": str(exc),
                 "line": getattr(exc, "line", None)}]})
            return 1
        raise
    checks = check_definition(definition)
    ok = all(c.status != "failed" for c in checks)
    if args.json:
        app.print_json({"file": args.file, "key": definition.key, "kind": definition.kind, "ok": ok,
                        "checks": [c.model_dump() for c in checks]})
    else:
        for check in checks:
            where = f" (line {check.line})" if check.line else ""
            print(f"[{_MARKS.get(check.status, check.status)}] {check.name}{where}: {check.message}")
        print(f"{args.file}: {'valid' if ok else 'INVALID'}")
    return 0 if ok else 1


def cmd_schema(args: argparse.Namespace, app: CliApp) -> int:
    print(json.dumps(definition_files.json_schema(), indent=2))
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("validate", help=COMMAND_HELP["validate"])
    p.add_argument("file", help="*.grader.yaml, *.grader.json or a .py function grader")
    add_json_flag(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help=COMMAND_HELP["schema"])
    p.set_defaults(func=cmd_schema)
