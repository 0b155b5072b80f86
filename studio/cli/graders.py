"""``grader-studio graders ...``: the library's graders from the command line."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.judges.reward_keys import secret_requests
from studio.core.models import FunctionGrader, GraderDefinition, dump_grader
from studio.core.models import files as definition_files
from studio.core.models.broken import BrokenRow
from studio.core.outside import iso_time, shown_time
from studio.core.safe_files import read_regular
from studio.core.store.graders import GraderRecord

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .broken import broken_json, say_broken
from .listing import TABLE_HEADERS, grader_fields, table_row
from .parsers import Subparsers


class GraderFileError(CliError):
    """A grader file that cannot be read as a grader, with the line at fault when there is one."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def load_grader_file(path: str, key: str | None = None) -> GraderDefinition:
    """A ``*.grader.yaml``/``.json`` file, or a ``.py`` source that becomes a function grader."""
    file = Path(path)
    if file.suffix == ".py":
        return _function_grader_file(file, key)
    definition = definition_files.load(file)
    if key:
        definition = definition.model_copy(update={"key": key})
    return definition


def _function_grader_file(file: Path, key: str | None) -> FunctionGrader:
    """A ``.py`` grader: a syntax error is named by line and column, the name comes from the docstring."""
    from studio.core.sandbox.validation import detect_contract

    try:
        source = read_regular(file).decode("utf-8")  # never a FIFO or a device: it would never end
    except OSError as exc:
        raise CliError(f"{file}: cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line = read_regular(file)[: exc.start].count(b"\n") + 1
        raise GraderFileError(f"{file}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x}) on line "
                              f"{line}; save it as UTF-8", line=line) from None
    try:
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as exc:
        where = f"{file}:{exc.lineno}" if exc.lineno else str(file)
        column = f", column {exc.offset}" if exc.offset else ""
        raise GraderFileError(f"{where}: syntax error on line {exc.lineno}{column}: {exc.msg}",
                              line=exc.lineno) from None
    contract = detect_contract(source)
    if contract is None:
        raise CliError(
            f"{file}: no grader entry point found (async def grade(thread), grade(sample, item), "
            "grade_batch(samples), get_assert(output, context) or a Letta @grader function)"
        )
    docstring = (ast.get_docstring(tree) or "").strip()
    name = docstring.splitlines()[0].strip().rstrip(".") if docstring else file.stem
    slug = (key or file.stem).lower().replace(" ", "-").replace("_", "-")
    return FunctionGrader(key=slug, name=name[:200], source=source, contract=contract)


def record_dict(record: GraderRecord) -> JsonObject:
    return grader_fields(record.key, record.kind, record.name, record.current_version, record.locked,
                         record.deleted, record.updated_at)


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    entries = app.library.graders.listing(include_deleted=args.all, deleted_only=args.trash)
    records = [e for e in entries if not isinstance(e, BrokenRow)]
    broken = [e for e in entries if isinstance(e, BrokenRow)]
    if args.json:
        app.print_json([record_dict(r) for r in records] + [broken_json(b) for b in broken])
    else:
        app.print_table([table_row(r.key, r.kind, r.current_version, r.locked, r.deleted, r.name) for r in records]
                        + [[b.ident, "BROKEN", "", "", "", b.reason] for b in broken], TABLE_HEADERS)
        say_broken(broken)
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    if args.version is not None:
        definition = app.library.graders.version(args.key, args.version).definition
        record = app.library.graders.get(args.key, include_deleted=True)
    else:
        record = app.library.graders.get(args.key, include_deleted=True)
        definition = record.definition
    if args.json:
        app.print_json({**record_dict(record), "definition": dump_grader(definition)})
    else:
        print(definition_files.to_yaml(definition), end="")
    return 0


def _warn_if_invalid(definition: GraderDefinition, strict: bool) -> bool:
    """Run the checks ``validate`` runs; print failures on stderr. True when the grader may be stored."""
    from studio.core.checks import check_definition

    failed = [c for c in check_definition(definition) if c.status == "failed"]
    for check in failed:
        where = f" (line {check.line})" if check.line else ""
        print(f"warning: {definition.key} fails validation: {check.name}{where}: {check.message}",
              file=sys.stderr)
    if failed and strict:
        print(f"error: {definition.key} not stored (--strict)", file=sys.stderr)
        return False
    return True


def cmd_create(args: argparse.Namespace, app: CliApp) -> int:
    definition = load_grader_file(args.file, args.key)
    if not _warn_if_invalid(definition, args.strict):
        return 1
    record = app.library.graders.create(definition, message=args.message or "")
    verb = "recreated" if record.current_version > 1 else "created"
    print(f"{verb} {record.key} (v{record.current_version})")
    for line in secret_requests([definition], app.library):
        print(f"warning: {line}", file=sys.stderr)
    return 0


def cmd_save(args: argparse.Namespace, app: CliApp) -> int:
    definition = load_grader_file(args.file, args.key)
    if not _warn_if_invalid(definition, args.strict):
        return 1
    before = app.library.graders.get(definition.key).current_version
    record = app.library.graders.save(definition, message=args.message or "",
                                      base_version=getattr(args, "from_version", None))
    if record.current_version == before:
        print(f"{record.key} unchanged (v{before})")
    else:
        print(f"saved {record.key} v{record.current_version}")
    return 0


def cmd_delete(args: argparse.Namespace, app: CliApp) -> int:
    app.library.graders.delete(args.key)
    print(f"deleted {args.key} (in the trash: `grader-studio graders restore {args.key}` brings it back)")
    return 0


def cmd_restore(args: argparse.Namespace, app: CliApp) -> int:
    if args.version is not None:
        record = app.library.graders.restore_version(args.key, args.version)
        print(f"{args.key}: v{args.version} restored as v{record.current_version}")
    else:
        app.library.graders.restore(args.key)
        print(f"restored {args.key}")
    return 0


def cmd_lock(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.versioned import lock_sentence

    record = app.library.graders.set_locked(args.key, args.locked, force=getattr(args, "force", False))
    print(f"{lock_sentence(record)} {args.key}" if record.locked else f"unlocked {args.key}")
    return 0


def cmd_versions(args: argparse.Namespace, app: CliApp) -> int:
    versions = app.library.graders.versions(args.key)
    if args.json:
        app.print_json([
            {"version": v.version, "action": v.action, "message": v.message, "author": v.author,
             "created_at": iso_time(v.created_at), "definition": dump_grader(v.definition)}
            for v in versions
        ])
        return 0
    app.print_table(
        [[v.version, v.action, v.author, shown_time(v.created_at, "%Y-%m-%d %H:%M:%S"), v.message] for v in versions],
        ["VERSION", "ACTION", "AUTHOR", "CREATED (UTC)", "MESSAGE"],
    )
    for prev, cur in zip(versions, versions[1:], strict=False):
        diff = app.library.graders.diff(args.key, prev.version, cur.version)
        print(f"\n{diff}" if diff else f"\n(v{cur.version}: no change from v{prev.version})")
    return 0


def cmd_diff(args: argparse.Namespace, app: CliApp) -> int:
    diff = app.library.graders.diff(args.key, args.v1, args.v2)
    print(diff if diff else f"v{args.v1} and v{args.v2} are identical", end="" if diff else "\n")
    return 0


def cmd_export_file(args: argparse.Namespace, app: CliApp) -> int:
    record = app.library.graders.get(args.key, include_deleted=True)
    try:
        path = definition_files.save(record.definition, args.output)  # never through a planted link
    except OSError as exc:
        raise CliError(f"cannot write {exc.filename}: {exc.strerror}") from None
    print(f"wrote {path}")
    return 0


def register(sub: Subparsers) -> None:
    graders = sub.add_parser("graders", help=COMMAND_HELP["graders"])
    gsub = graders.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = gsub.add_parser("list", help="live graders (--all adds the trash)")
    p.add_argument("--all", action="store_true", help="include deleted graders")
    p.add_argument("--trash", action="store_true", help="only deleted graders")
    add_json_flag(p)
    p.set_defaults(func=cmd_list)

    p = gsub.add_parser("show", help="print a grader's definition (YAML)")
    p.add_argument("key")
    p.add_argument("--version", type=int)
    add_json_flag(p)
    p.set_defaults(func=cmd_show)

    for name, func, text in (
        ("create", cmd_create, "create a grader from FILE (recreates a deleted key)"),
        ("save", cmd_save, "save FILE as a new version of its grader"),
    ):
        p = gsub.add_parser(name, help=text)
        p.add_argument("file", help="*.grader.yaml, *.grader.json or a .py function grader")
        p.add_argument("--key", help="use this key instead of the file's")
        p.add_argument("-m", "--message", help="a note kept with the version")
        p.add_argument("--strict", action="store_true",
                       help="refuse (exit 1) a grader that fails validation instead of warning")
        if name == "save":
            p.add_argument("--from-version", type=int, metavar="N",
                           help="the version FILE was written from: refuse (exit 1) if another was saved since")
        p.set_defaults(func=func)

    p = gsub.add_parser("write", help="write a grader's definition file")
    p.add_argument("key")
    p.add_argument("-o", "--output", required=True, help="path ending .grader.yaml or .grader.json")
    p.set_defaults(func=cmd_export_file)

    p = gsub.add_parser("delete", help="move a grader to the trash")
    p.add_argument("key")
    p.set_defaults(func=cmd_delete)

    p = gsub.add_parser("restore", help="bring a grader back from the trash (or an old version with --version)")
    p.add_argument("key")
    p.add_argument("--version", type=int, help="make this old version current (as a new version)")
    p.set_defaults(func=cmd_restore)

    for name, locked in (("lock", True), ("unlock", False)):
        p = gsub.add_parser(name, help=f"{name} a grader ({'forbids' if locked else 'allows'} edit and delete)")
        p.add_argument("key")
        if not locked:
            p.add_argument("--force", action="store_true",
                           help="lift another user's lock (recorded in the grader's history)")
        p.set_defaults(func=cmd_lock, locked=locked)

    p = gsub.add_parser("versions", help="every version of a grader, with diffs")
    p.add_argument("key")
    add_json_flag(p)
    p.set_defaults(func=cmd_versions)

    p = gsub.add_parser("diff", help="diff two versions of a grader")
    p.add_argument("key")
    p.add_argument("v1", type=int)
    p.add_argument("v2", type=int)
    p.set_defaults(func=cmd_diff)
