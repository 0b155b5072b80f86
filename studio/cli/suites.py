"""``grader-studio suites ...``: several graders run together, kept in the library like graders.

``suites create KEY GRADER [GRADER ...] [--weight G=W] [--threshold G=T] [--overall RULE]``, ``list``,
``show``, ``add``/``remove``, ``lock``/``unlock``, ``trash``/``restore``, ``versions``, and
``export``/``import`` of one YAML file holding the suite and its graders. Bad input is one sentence
and nothing is stored; ``run KEY DATASET`` runs a suite as it runs a grader.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from pydantic import ValidationError

from studio.core.json_types import JsonObject
from studio.core.models.broken import BrokenRow
from studio.core.models.suite import SuiteDefinition, SuiteMember
from studio.core.near_names import did_you_mean
from studio.core.outside import iso_time, shown_time

if TYPE_CHECKING:
    from studio.core.store.suites import SuiteRecord
from studio.core.safe_files import read_regular_text

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag, write_or_print
from .broken import broken_json, say_broken
from .parsers import Subparsers


def _pairs(values: list[str] | None, option: str, keys: list[str]) -> dict[str, float]:
    """``--weight GRADER=W`` options as {grader: number}; a sentence for anything else."""
    out: dict[str, float] = {}
    for value in values or []:
        grader, sep, number = value.partition("=")
        if not sep or not grader:
            raise CliError(f"{option} takes GRADER=NUMBER, not {value!r}", code=2)
        try:
            parsed = float(number)
        except ValueError:
            raise CliError(f"{option} {value!r}: {number!r} is not a number", code=2) from None
        if not math.isfinite(parsed):
            raise CliError(f"{option} {value!r}: the number must be finite", code=2)
        if grader not in keys:
            raise CliError(f"{option} {value!r}: {grader!r} is not one of the suite's graders"
                           f"{did_you_mean(grader, keys)}", code=2)
        out[grader] = parsed
    return out


def _overall(rule: str | None) -> dict[str, str | None]:
    if rule is None:
        return {}
    if rule in ("mean", "all-pass", "none"):
        return {"overall": rule, "overall_grader": None}
    return {"overall": "composite", "overall_grader": rule}


def _definition(**fields: object) -> SuiteDefinition:
    try:
        return SuiteDefinition(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if not isinstance(p, int))
        message = str(first["msg"]).removeprefix("Value error, ")
        raise CliError(f"{where}: {message}" if where and first["type"] != "value_error" else message, code=2) from None


def _members(keys: list[str], args: argparse.Namespace, base: dict[str, SuiteMember] | None = None) -> list[SuiteMember]:
    weights = _pairs(args.weight, "--weight", keys)
    thresholds = _pairs(args.threshold, "--threshold", keys)
    members = []
    for key in keys:
        member = (base or {}).get(key) or SuiteMember.model_construct(grader=key, version=None, weight=1.0,
                                                                       threshold=None)
        values = member.model_dump()
        values["grader"] = key
        if key in weights:
            values["weight"] = weights[key]
        if key in thresholds:
            values["threshold"] = thresholds[key]
        try:
            members.append(SuiteMember(**values))
        except ValidationError as exc:
            raise CliError(f"grader {key!r}: {exc.errors()[0]['msg']}", code=2) from None
    return members


def cmd_create(args: argparse.Namespace, app: CliApp) -> int:
    duplicates = sorted({k for k in args.graders if args.graders.count(k) > 1})
    if duplicates:
        raise CliError(f"grader {duplicates[0]!r} is named twice: a suite runs each grader once", code=2)
    suite = _definition(key=args.key, name=args.name or "", graders=_members(args.graders, args),
                        **_overall(args.overall))
    record = app.library.suites.create(suite)
    print(f"created suite {record.key} v{record.current_version}: {', '.join(suite.grader_keys())}")
    return 0


def _record_json(record: SuiteRecord) -> JsonObject:
    return {"key": record.key, "name": record.name, "version": record.current_version, "locked": record.locked,
            "deleted": record.deleted, **record.definition.model_dump(mode="json", exclude={"key", "name"})}


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    entries = app.library.suites.listing(deleted_only=args.trash, include_deleted=args.all)
    records = [e for e in entries if not isinstance(e, BrokenRow)]
    broken = [e for e in entries if isinstance(e, BrokenRow)]
    if args.json:
        app.print_json([_record_json(r) for r in records] + [broken_json(b) for b in broken])
        return 0
    app.print_table([[r.key, f"v{r.current_version}", "yes" if r.locked else "", "yes" if r.deleted else "",
                      r.definition.overall, ", ".join(r.definition.grader_keys())] for r in records]
                    + [[b.ident, "BROKEN", "", "", "", b.reason] for b in broken],
                    ["KEY", "VERSION", "LOCKED", "TRASH", "OVERALL", "GRADERS"])
    say_broken(broken)
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    record = app.library.suites.get(args.key, include_deleted=True)
    definition = record.definition if args.version is None else app.library.suites.version(args.key, args.version).definition
    if args.json:
        app.print_json(_record_json(record) | definition.model_dump(mode="json", exclude={"key", "name"}))
        return 0
    state = " (locked)" if record.locked else ""
    state += " (in the trash)" if record.deleted else ""
    print(f"suite {record.key} v{args.version or record.current_version}{state}"
          + (f": {record.name}" if record.name else ""))
    overall = definition.overall + (f" ({definition.overall_grader})" if definition.overall_grader else "")
    print(f"  overall score: {overall}")
    app.print_table([[m.grader, "current" if m.version is None else f"v{m.version}", f"{m.weight:g}",
                      "" if m.threshold is None else f"{m.threshold:g}"] for m in definition.graders],
                    ["GRADER", "VERSION", "WEIGHT", "THRESHOLD"])
    return 0


def cmd_add(args: argparse.Namespace, app: CliApp) -> int:
    record = app.library.suites.get(args.key)
    current = record.definition
    if args.grader in current.grader_keys():
        raise CliError(f"grader {args.grader!r} is already in suite {args.key!r}", code=1)
    keys = [*current.grader_keys(), args.grader]
    base = {m.grader: m for m in current.graders}
    earlier = _last_membership(app, args.key, args.grader)
    kept = []
    if earlier is not None:  # it was in the suite before (``suites remove``): its weight and threshold come back
        number, member = earlier
        weight, threshold = 1.0, None
        if member.weight != 1.0 and args.grader not in _pairs(args.weight, "--weight", keys):
            weight = member.weight
            kept.append(f"weight {member.weight:g}")
        if member.threshold is not None and args.grader not in _pairs(args.threshold, "--threshold", keys):
            threshold = member.threshold
            kept.append(f"threshold {member.threshold:g}")
        if kept:
            base[args.grader] = SuiteMember.model_construct(grader=args.grader, version=None, weight=weight,
                                                            threshold=threshold)
    members = _members(keys, args, base)
    if args.version is not None:
        members[-1] = members[-1].model_copy(update={"version": args.version})
    saved = app.library.suites.save(current.model_copy(update={"graders": members}))
    print(f"suite {saved.key} v{saved.current_version}: {', '.join(saved.definition.grader_keys())}")
    if kept:
        print(f"{args.grader} keeps the {' and '.join(kept)} it had in v{number} (give --weight or --threshold "
              "to change them)")
    return 0


def _last_membership(app: CliApp, key: str, grader: str) -> tuple[int, SuiteMember] | None:
    """The latest earlier version of suite ``key`` that held ``grader``, and its member entry."""
    for record in sorted(app.library.suites.versions(key), key=lambda r: r.version, reverse=True):
        for member in record.definition.graders:
            if member.grader == grader:
                return record.version, member
    return None


def cmd_remove(args: argparse.Namespace, app: CliApp) -> int:
    before = app.library.suites.get(args.key)
    current = before.definition
    if args.grader not in current.grader_keys():
        raise CliError(f"grader {args.grader!r} is not in suite {args.key!r}")
    members = [m for m in current.graders if m.grader != args.grader]
    if not members:
        raise CliError(f"{args.grader!r} is the last grader of suite {args.key!r}: move the suite to the trash instead")
    # a composite overall that combines the removed grader is refused by the library's check
    saved = app.library.suites.save(current.model_copy(update={"graders": members}))
    print(f"suite {saved.key} v{saved.current_version}: {', '.join(saved.definition.grader_keys())}")
    [gone] = [m for m in current.graders if m.grader == args.grader]
    settings = ([f"weight {gone.weight:g}"] if gone.weight != 1.0 else []) + (
        [f"threshold {gone.threshold:g}"] if gone.threshold is not None else [])
    if settings:
        print(f"{args.grader}'s {' and '.join(settings)} stay in v{before.current_version}; "
              f"`grader-studio suites add {saved.key} {args.grader}` brings the grader back with them")
    return 0


def cmd_lock(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.versioned import lock_sentence

    record = app.library.suites.set_locked(args.key, args.action == "lock", force=getattr(args, "force", False))
    print(f"suite {record.key} is {lock_sentence(record) if record.locked else 'unlocked'}")
    return 0


def cmd_trash(args: argparse.Namespace, app: CliApp) -> int:
    app.library.suites.delete(args.key)
    print(f"moved suite {args.key} to the trash (`grader-studio suites restore {args.key}` brings it back)")
    return 0


def cmd_restore(args: argparse.Namespace, app: CliApp) -> int:
    if args.version is not None:
        record = app.library.suites.restore_version(args.key, args.version)
    else:
        record = app.library.suites.restore(args.key)
    print(f"suite {record.key} v{record.current_version} is back")
    return 0


def cmd_versions(args: argparse.Namespace, app: CliApp) -> int:
    versions = app.library.suites.versions(args.key)
    if args.json:
        app.print_json([{"version": v.version, "action": v.action, "message": v.message, "author": v.author,
                         "created_at": iso_time(v.created_at), **v.definition.model_dump(mode="json")}
                        for v in versions])
        return 0
    app.print_table([[v.version, v.action, v.author, shown_time(v.created_at),
                      ", ".join(v.definition.grader_keys()), v.message] for v in versions],
                    ["VERSION", "ACTION", "AUTHOR", "CREATED", "GRADERS", "MESSAGE"])
    return 0


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.suite_files import export_suite

    text = export_suite(app.library, args.key)
    write_or_print(args.output, text, f"suite {args.key} and its graders")
    return 0


def cmd_import(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.suite_files import import_suite

    try:
        text = read_regular_text(args.file)  # never a FIFO or a device: it would never end
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    record = import_suite(app.library, text, source=args.file, key=args.key)
    print(f"imported suite {record.key} v{record.current_version}: {', '.join(record.definition.grader_keys())}")
    return 0


def register(sub: Subparsers) -> None:
    suites = sub.add_parser("suites", help=COMMAND_HELP["suites"])
    ssub = suites.add_subparsers(dest="action", metavar="ACTION", required=True)

    def weights(p: argparse.ArgumentParser) -> None:
        p.add_argument("--weight", action="append", metavar="GRADER=W", help="a grader's weight in the mean (default 1)")
        p.add_argument("--threshold", action="append", metavar="GRADER=T",
                       help="the score a grader passes at (default: the run's --pass-threshold)")

    p = ssub.add_parser("create", help="a new suite of these graders")
    p.add_argument("key")
    p.add_argument("graders", nargs="+", metavar="GRADER")
    p.add_argument("--name", help="a display name")
    p.add_argument("--overall", metavar="RULE", help="overall score: mean, all-pass or a composite grader's key")
    weights(p)
    p.set_defaults(func=cmd_create)
    p = ssub.add_parser("list", help="live suites (--all adds the trash)")
    p.add_argument("--all", action="store_true")
    p.add_argument("--trash", action="store_true", help="only suites in the trash")
    add_json_flag(p)
    p.set_defaults(func=cmd_list)
    p = ssub.add_parser("show", help="a suite's graders, weights, thresholds and overall rule")
    p.add_argument("key")
    p.add_argument("--version", type=int)
    add_json_flag(p)
    p.set_defaults(func=cmd_show)
    p = ssub.add_parser("add", help="add a grader to a suite (a new version)")
    p.add_argument("key")
    p.add_argument("grader")
    p.add_argument("--version", type=int, help="pin the grader to this version (default: follow the current one)")
    weights(p)
    p.set_defaults(func=cmd_add)
    p = ssub.add_parser("remove", help="remove a grader from a suite (a new version)")
    p.add_argument("key")
    p.add_argument("grader")
    p.set_defaults(func=cmd_remove)
    for action, text in (("lock", "refuse edits and trashing"), ("unlock", "allow edits again")):
        p = ssub.add_parser(action, help=text)
        p.add_argument("key")
        if action == "unlock":
            p.add_argument("--force", action="store_true",
                           help="lift another user's lock (recorded in the suite's history)")
        p.set_defaults(func=cmd_lock)
    p = ssub.add_parser("trash", help="move a suite to the trash")
    p.add_argument("key")
    p.set_defaults(func=cmd_trash)
    p = ssub.add_parser("restore", help="bring a suite back from the trash (or an old version with --version)")
    p.add_argument("key")
    p.add_argument("--version", type=int)
    p.set_defaults(func=cmd_restore)
    p = ssub.add_parser("versions", help="a suite's history")
    p.add_argument("key")
    add_json_flag(p)
    p.set_defaults(func=cmd_versions)
    p = ssub.add_parser("export", help="one YAML file: the suite and every grader it uses")
    p.add_argument("key")
    p.add_argument("-o", "--output", help="file (default: standard output)")
    p.set_defaults(func=cmd_export)
    p = ssub.add_parser("import", help="a suite file: its graders are created (or saved as new versions) too")
    p.add_argument("file")
    p.add_argument("--key", help="import the suite under another key")
    p.set_defaults(func=cmd_import)
