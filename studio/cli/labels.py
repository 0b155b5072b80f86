"""``grader-studio labels import|export|list|history``: human labels of a dataset's samples.

``import`` never replaces another person's current label unless ``--replace`` says so: without it,
a file that would is refused whole (exit 2) with the samples named (the store's rule,
``LabelRepository.put_many``, which the window's label bar goes through too)."""

from __future__ import annotations

import argparse
import sys

from studio.core.datasets.label_files import label_record, read_labels, write_labels
from studio.core.models.broken import BrokenRow
from studio.core.models.labels import DEFAULT_KEY, Label
from studio.core.outside import iso_time, shown_time
from studio.core.safe_files import open_text
from studio.core.store.labels import broken_version

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .broken import broken_json, say_broken
from .parsers import Subparsers


def _scale(text: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.replace(" ", "").split("-", 1) if x != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"a scale is LOW-HIGH, e.g. 1-5 (got {text!r})") from None
    return low, high


def cmd_import(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.store.labels import ReplaceRefused

    library = app.library
    known = library.labels.sample_ids(args.dataset)
    items = read_labels(args.file, known)
    if args.labeler:
        items = [i if i.labeler else i.model_copy(update={"labeler": args.labeler}) for i in items]
    if args.scale:
        library.labels.set_scale(args.dataset, args.key, *args.scale)
    try:
        written = library.labels.put_many(args.dataset, items, args.key, replace=args.replace)
    except ReplaceRefused as refused:
        them = "it" if len(refused.refused) == 1 else "them"
        raise CliError(f"{refused}; give --replace to replace {them}", 2) from None
    info = library.labels.info(args.dataset, args.key)
    if args.json:
        app.print_json({"dataset": args.dataset, "key": args.key, "read": len(items), "versions_written": written,
                        "labelled": info.labelled, "counts": info.counts})
    else:
        print(f"labels {args.key!r} on {args.dataset}: {len(items)} read, {written} new versions, "
              f"{info.labelled} samples labelled")
    return 0


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    current = app.library.labels.current(args.dataset, args.key)
    order = {sid: i for i, sid in enumerate(app.library.labels.sample_ids(args.dataset))}
    items = sorted(current.values(), key=lambda label: order.get(label.sample_id, len(order)))
    fmt = args.format or ("csv" if args.output and args.output.lower().endswith(".csv") else "jsonl")
    if args.output:
        try:
            with open_text(args.output, newline="") as out:  # never through a planted link
                count = write_labels(items, out, fmt, raw=args.raw_csv)
        except OSError as exc:
            raise CliError(f"cannot write {exc.filename}: {exc.strerror}") from None
        print(f"wrote {count} labels to {args.output}", file=sys.stderr)
    else:
        write_labels(items, sys.stdout, fmt, raw=args.raw_csv)
    return 0


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    library = app.library
    keys = library.labels.keys(args.dataset)
    current = library.labels.current(args.dataset, args.key)
    broken = library.labels.broken(args.dataset, args.key)
    info = library.labels.info(args.dataset, args.key)
    if args.json:
        app.print_json({"dataset": args.dataset, "key": args.key, "keys": keys, "labelled": info.labelled,
                        "counts": info.counts, "scale": None if info.scale_min is None else
                        [info.scale_min, info.scale_max],
                        "labels": [label_record(label) for label in current.values()]
                        + [broken_json(row) for row in broken]})
        return 0
    print(f"label sets on {args.dataset}: {', '.join(keys) or 'none'}")
    print(f"{args.key}: {info.labelled} labelled  " + "  ".join(f"{k} {v}" for k, v in sorted(info.counts.items())))
    rows = [[label.sample_id, label.value, f"v{label.version}", label.labeler,
             label.note.replace("\n", " ")[:60]] for label in current.values()]
    rows += [[row.key or row.ident, "BROKEN", f"v{broken_version(row)}", row.author, row.reason[:60]] for row in broken]
    app.print_table(rows, ["SAMPLE", "LABEL", "VERSION", "LABELER", "NOTE"])
    say_broken(broken)
    return 0


def cmd_history(args: argparse.Namespace, app: CliApp) -> int:
    """Every version of one sample's label, oldest first, each with who labelled it (two
    reviewers of one sample are both kept: docs/team.md)."""
    entries = app.library.labels.history_entries(args.dataset, args.sample_id, args.key)
    broken = [entry for entry in entries if isinstance(entry, BrokenRow)]
    if args.json:
        app.print_json([{**label_record(label), "created_at": iso_time(label.created_at)} if isinstance(label, Label)
                        else broken_json(label) for label in entries])
        return 0
    rows = [[f"v{label.version}", "(cleared)" if label.cleared else label.value,
             label.labeler, shown_time(label.created_at), label.note.replace("\n", " ")[:60]]
            if isinstance(label, Label) else [f"v{broken_version(label)}", "BROKEN", label.author, "",
                                              label.reason[:60]]
            for label in entries]
    app.print_table(rows, ["VERSION", "LABEL", "LABELER", "CREATED (UTC)", "NOTE"])
    say_broken(broken)
    return 0


def register(sub: Subparsers) -> None:
    labels = sub.add_parser("labels", help=COMMAND_HELP["labels"])
    lsub = labels.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = lsub.add_parser("import", help="add labels from JSONL or CSV (all or nothing; another person's "
                                    "label is replaced only with --replace)")
    p.add_argument("file")
    p.add_argument("--dataset", required=True)
    p.add_argument("--key", default=DEFAULT_KEY, help=f"label set (default {DEFAULT_KEY})")
    p.add_argument("--labeler", help="who labelled, for lines that do not say")
    p.add_argument("--scale", type=_scale, help="the scores' scale, e.g. 1-5")
    p.add_argument("--replace", action="store_true",
                   help="replace labels that another person gave (without it, a file that would is refused, "
                        "exit 2); the replaced versions stay in each sample's history")
    add_json_flag(p)
    p.set_defaults(func=cmd_import)
    p = lsub.add_parser("export", help="write the current labels as JSONL or CSV")
    p.add_argument("--dataset", required=True)
    p.add_argument("--key", default=DEFAULT_KEY)
    p.add_argument("--format", choices=("jsonl", "csv"))
    p.add_argument("--raw-csv", action="store_true",
                   help="write CSV cells as stored: no leading ' before a cell a spreadsheet reads as a formula")
    p.add_argument("-o", "--output", help="file (default: standard output)")
    p.set_defaults(func=cmd_export)
    p = lsub.add_parser("list", help="the current labels of a dataset")
    p.add_argument("--dataset", required=True)
    p.add_argument("--key", default=DEFAULT_KEY)
    add_json_flag(p)
    p.set_defaults(func=cmd_list)
    p = lsub.add_parser("history", help="every version of one sample's label, with its labeler")
    p.add_argument("sample_id")
    p.add_argument("--dataset", required=True)
    p.add_argument("--key", default=DEFAULT_KEY)
    add_json_flag(p)
    p.set_defaults(func=cmd_history)
