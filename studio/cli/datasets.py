"""``grader-studio datasets ...``: import and browse sample sets."""

from __future__ import annotations

import argparse
from pathlib import Path

from studio.core.datasets import FORMATS, DatasetError, DatasetStream

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .parsers import Subparsers


def cmd_import(args: argparse.Namespace, app: CliApp) -> int:
    # streamed: a chunk at a time inside one transaction, so a million rows take little memory and
    # a bad line anywhere still leaves nothing imported
    name = args.name or Path(args.file).stem
    try:
        stream = DatasetStream(args.file, args.format)
        record = app.library.datasets.create(
            name, stream.rows(), format=stream.format, source=Path(args.file).name, replace=args.replace
        )
    except DatasetError as exc:
        raise CliError(f"{exc}\nnothing was imported") from None
    print(f"imported {record.sample_count} samples into {record.name!r} (format {record.format})")
    return 0


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    records = app.library.datasets.list()
    if args.json:
        app.print_json([r.model_dump(mode="json") for r in records])
    else:
        app.print_table([[r.name, r.sample_count, r.format, r.source] for r in records],
                        ["NAME", "SAMPLES", "FORMAT", "SOURCE"])
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    for option, value in (("--offset", args.offset), ("--limit", args.limit)):
        if value < 0:
            raise CliError(f"{option} must be 0 or more, not {value}", 2)
    record = app.library.datasets.get(args.name)
    samples = app.library.datasets.samples(args.name, offset=args.offset, limit=args.limit)
    if args.json:
        app.print_json({"dataset": record.model_dump(mode="json"),
                        "samples": [s.model_dump(mode="json") for s in samples]})
        return 0
    print(f"{record.name}: {record.sample_count} samples, format {record.format}")
    provenance = record.provenance or {}
    if provenance.get("kind") == "generated":  # where its completions came from (grader-studio generate)
        cost = provenance.get("cost_usd")
        print(f"generated from {provenance.get('source_dataset')} by endpoint {provenance.get('endpoint')} "
              f"(model {provenance.get('model')}): {provenance.get('status')}, {provenance.get('calls', 0)} calls, "
              f"{int(provenance.get('prompt_tokens') or 0) + int(provenance.get('completion_tokens') or 0):,} tokens"
              + (f", ${cost}" if cost is not None else "") + f", started {provenance.get('started_at')}")
    if provenance.get("kind") == "curated":  # settled samples of a review queue (grader-studio queues dataset)
        print(f"curated from {provenance.get('source_dataset')} by review queue {provenance.get('queue')!r} "
              f"(runs {', '.join(map(str, provenance.get('runs') or []))})")
    for n, sample in enumerate(samples, start=args.offset):
        print(f"\n#{n} {sample.id}")
        for turn in sample.messages:
            print(f"  [{turn.role}] {_short(turn.content)}")
        print(f"  [completion] {_short(sample.completion or '')}")
        if sample.expected is not None:
            print(f"  [expected] {_short(sample.expected)}")
    return 0


def cmd_delete(args: argparse.Namespace, app: CliApp) -> int:
    app.library.datasets.delete(args.name)
    print(f"deleted dataset {args.name}")
    return 0


def _short(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def register(sub: Subparsers) -> None:
    datasets = sub.add_parser("datasets", help=COMMAND_HELP["datasets"])
    dsub = datasets.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = dsub.add_parser("import", help="import a JSONL or CSV file (all or nothing)")
    p.add_argument("file")
    p.add_argument("--name", help="dataset name (default: the file name)")
    p.add_argument("--format", choices=FORMATS, help="row shape (default: detected)")
    p.add_argument("--replace", action="store_true", help="replace a dataset of the same name")
    p.set_defaults(func=cmd_import)

    p = dsub.add_parser("list", help="datasets in the library")
    add_json_flag(p)
    p.set_defaults(func=cmd_list)

    p = dsub.add_parser("show", help="print samples of a dataset")
    p.add_argument("name")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=5)
    add_json_flag(p)
    p.set_defaults(func=cmd_show)

    p = dsub.add_parser("delete", help="delete a dataset")
    p.add_argument("name")
    p.set_defaults(func=cmd_delete)

    from .pairing import register_pair

    register_pair(dsub)
