"""``grader-studio export`` / ``import``: ship graders to a platform's format and bring theirs in."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.judges.reward_keys import secret_requests
from studio.core.models import GraderDefinition, dump_grader
from studio.core.platforms import (
    ExportResult,
    Platform,
    detect_platform,
    get_platform,
    platforms,
)
from studio.core.platforms._eval import export_eval
from studio.core.platforms._fields import export_endpoints
from studio.core.platforms._judge_prompts import export_model
from studio.core.platforms._roundtrip import measure
from studio.core.safe_files import file_problem, write_text, write_tree
from studio.core.store import LibraryError
from studio.core.store.endpoints import EndpointRepository
from studio.core.store.targets import targets

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .parsers import Subparsers


def register(sub: Subparsers) -> None:
    names = ", ".join(platforms())
    exp = sub.add_parser(
        "export",
        help=COMMAND_HELP["export"],
        description=f"Write graders in a platform's own format. Targets: {names}.",
    )
    exp.add_argument("key", nargs="*",
                     help="grader or suite key(s) (or --all); with --dataset they make one runnable eval")
    exp.add_argument("--all", action="store_true", help="every live grader the target can express")
    exp.add_argument("--to", required=True, metavar="TARGET", help=f"one of: {names}")
    exp.add_argument("-o", "--output", metavar="PATH", help="file or directory (directory for --all)")
    exp.add_argument("--dataset", metavar="NAME",
                     help="also write this dataset in the platform's form: a whole eval that runs as is "
                          "(promptfoo, inspect, openai)")
    exp.add_argument("--model", metavar="ID",
                     help="model id the exported judges name (default: the judge's model, else its endpoint's)")
    add_json_flag(exp)
    exp.set_defaults(func=cmd_export)

    imp = sub.add_parser(
        "import",
        help=COMMAND_HELP["import"],
        description="Create graders in the library from a platform's grader file (format detected when possible).",
    )
    imp.add_argument("path", help="the platform's file (JSON, suite YAML, promptfoo config, .py)")
    imp.add_argument("--from", dest="source", metavar="TARGET", help="platform the file comes from")
    imp.add_argument("--key", help="key for the grader when the file holds one without a key")
    imp.add_argument("--dry-run", action="store_true", help="show what would be created, create nothing")
    imp.add_argument("--strict", action="store_true",
                     help="create nothing when any entry of the file cannot be imported (exit 1, listing them)")
    imp.add_argument("--items", metavar="ITEMS.jsonl",
                     help="an OpenAI eval's items: also create a dataset of them (the suite is named after the eval)")
    add_json_flag(imp)
    imp.set_defaults(func=cmd_import)


def _report(result: ExportResult) -> None:
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    for key, reason in result.refused.items():
        print(f"skipped {key}: {reason}", file=sys.stderr)
    for line in result.notes:
        print(f"note: {line}", file=sys.stderr)


def _write(result: ExportResult, output: str | None) -> list[Path]:
    if output is None:
        if len(result.files) != 1:
            raise CliError(f"this export writes {len(result.files)} files: pass -o DIR", code=2)
        sys.stdout.write(next(iter(result.files.values())))
        return []
    target = Path(output)
    single_file = len(result.files) == 1 and target.suffix and not target.is_dir()
    try:  # never through a link planted at a file's name or among the folders below -o DIR
        if single_file:
            target.parent.mkdir(parents=True, exist_ok=True)
            return [write_text(target, next(iter(result.files.values())))]
        return write_tree(target, result.files)
    except OSError as exc:
        raise CliError(f"cannot write {exc.filename}: {exc.strerror}") from None


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    if bool(args.all) == bool(args.key):
        raise CliError("give grader KEY(s) or --all", code=2)
    if (args.all or args.dataset or len(args.key) > 1) and not args.output:
        raise CliError("--all, --dataset and several keys need -o DIR", code=2)
    platform = get_platform(args.to)
    # judges' endpoints become providers the platform can call (URLs and models; never keys)
    endpoints = {e.name: e for e in EndpointRepository.of(app.library).list()}
    named = _graders(args, app)
    # a suite imported from an OpenAI eval exports as that eval's one file (cli/openai_evals.py)
    from .openai_evals import exported_eval

    whole = None if (args.dataset or args.all or platform.name != "openai") else exported_eval(app, args.key, named)
    if len(named) > 1 and not args.output and whole is None:
        raise CliError("a suite exports several graders: pass -o DIR", code=2)
    with export_endpoints(endpoints), export_model(args.model):
        if whole is not None:
            result = whole
        else:
            result = _export_eval(args, app, named) if args.dataset else _export(args, app, platform, named)
        graders = [d if d.key == key else d.model_copy(update={"key": key}) for key, d in named]
        lost = measure(platform, graders, result)  # imported back: what did not come back equal
    paths = _write(result, args.output)
    _report(result)
    for key, fields in lost.items():
        print(f"not carried: {key}: {', '.join(fields)} (importing the {platform.label} files back gives "
              "a different value)", file=sys.stderr)
    if args.json:
        app.print_json({"files": [str(p) for p in paths], "warnings": result.warnings,
                        "refused": result.refused, "notes": result.notes, "not_carried": lost})
    elif paths:
        for path in paths:
            print(path)
    if lost:
        print(f"lossy export: {len(lost)} grader{'' if len(lost) == 1 else 's'} would not import back the same "
              f"(exit status {PARTIAL})", file=sys.stderr)
        return PARTIAL
    return 0


def _graders(args: argparse.Namespace, app: CliApp) -> list[tuple[str, GraderDefinition]]:
    """(key, definition) of every grader named: a grader key is its current version; a suite key is
    each of its graders at the version the suite pins (``store.targets.targets``, as ``run`` reads it)."""
    library = app.library
    if args.all:
        return [(r.key, r.definition) for r in library.graders.list()]
    return [(key, library.graders.version(key, version).definition)
            for name in args.key for key, version in targets(library, name)]


def _export_eval(args: argparse.Namespace, app: CliApp, named: list[tuple[str, GraderDefinition]]) -> ExportResult:
    """Graders (or a suite's) plus a dataset as one eval in the platform's own form (``export_eval``)."""
    samples = app.library.datasets.samples(args.dataset)
    from .generate import generated_by  # a generated dataset's eval generates as the studio did

    result = export_eval(args.to.lower(), named, samples, args.dataset, generated_by(app, args.dataset, samples))
    if not result.files:
        raise CliError(f"nothing to write for {args.to}")
    return result


def _export(args: argparse.Namespace, app: CliApp, platform: Platform,
            named: list[tuple[str, GraderDefinition]]) -> ExportResult:
    if not args.all and len(named) == 1:
        return platform.export(named[0][1])
    graders = [definition for _, definition in named]
    result = platform.export_many(graders)
    if not result.files:
        _report(result)
        raise CliError(f"none of the {len(graders)} graders can be expressed for {platform.label}")
    return result


#: exit status of an import that created graders but left entries of the file out, and of an export
#: whose files do not import back the same (each grader's fields listed)
PARTIAL = 3


def cmd_import(args: argparse.Namespace, app: CliApp) -> int:
    path = Path(args.path)
    if (problem := file_problem(path)) is not None:  # a FIFO or a device would never end
        raise CliError(f"{path}: {problem}")
    platform = get_platform(args.source) if args.source else detect_platform(path)
    if not platform.imports:
        raise CliError(f"{platform.label} has no grader file format to import from")
    if args.items and platform.name != "openai":
        raise CliError(f"--items goes with an OpenAI eval; {path.name} is read as {platform.label}", 2)
    result = platform.import_file(path, key=args.key)
    for entry in result.skipped:
        print(f"not imported: {entry.sentence()}", file=sys.stderr)
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if args.strict and result.skipped:
        raise CliError(f"--strict: {len(result.skipped)} entr{'y' if len(result.skipped) == 1 else 'ies'} of "
                       f"{path.name} cannot be imported (listed above); nothing was created")
    secrets = secret_requests(result.graders, app.library)
    for line in secrets:
        print(f"warning: {line}", file=sys.stderr)
    actions: dict[str, str] = {}  # key -> "created"/"recreated" (or "would create"/"would recreate")
    refused: dict[str, str] = {}
    for grader in result.graders:
        if grader.key in actions or grader.key in refused:
            refused.setdefault(grader.key, f"the file holds the key {grader.key!r} more than once")
            continue
        if args.dry_run:  # the same refusals the import meets, without writing anything
            verb, refusal = app.library.graders.plan_create(grader.key)
            if refusal:
                refused[grader.key] = refusal
            else:
                actions[grader.key] = f"would {verb}"
            continue
        try:
            record = app.library.graders.create(grader, message=f"imported from {platform.label} ({path.name})")
            actions[grader.key] = "recreated" if record.current_version > 1 else "created"
        except LibraryError as exc:
            refused[grader.key] = str(exc)
    evals: JsonObject = {}
    if platform.name == "openai":  # the eval's suite and dataset (cli/openai_evals.py)
        from .openai_evals import finish

        evals = finish(args, app, path, result.graders, refused)
    if args.json:
        app.print_json({
            **({"openai_eval": evals} if evals else {}),
            "platform": platform.name,
            "dry_run": bool(args.dry_run),
            "created": [] if args.dry_run else list(actions),
            "would_create": list(actions) if args.dry_run else [],
            "refused": refused,
            "warnings": result.warnings,
            "skipped": [entry.model_dump(mode="json") for entry in result.skipped],
            "partial": result.partial,
            "secrets": secrets,
            "graders": [dump_grader(g) for g in result.graders] if args.dry_run else [],
        })
    else:
        shown: set[str] = set()
        for grader in result.graders:
            if grader.key in shown:
                continue
            shown.add(grader.key)
            verb = actions.get(grader.key) or ("would refuse" if args.dry_run else "refused")
            print(f"{verb} {grader.key} ({grader.kind}) from {platform.label}")
    for key, reason in refused.items():
        print(f"{'would fail' if args.dry_run else 'error'}: {key}: {reason}", file=sys.stderr)
    if refused:
        return 1
    if result.partial or evals.get("not_carried"):
        if not result.partial:
            print(f"partial import: {len(evals['not_carried'])} field(s) of {path.name} have no effect here "
                  f"(listed above; exit status {PARTIAL})", file=sys.stderr)
            return PARTIAL
        print(f"partial import: {len(result.skipped)} entr{'y' if len(result.skipped) == 1 else 'ies'} of "
              f"{path.name} not imported (exit status {PARTIAL})", file=sys.stderr)
        return PARTIAL
    return 0
