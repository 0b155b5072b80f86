"""``grader-studio datasets pair A B --name N``: two datasets' completions side by side for a pairwise judge."""

from __future__ import annotations

import argparse

from .app import CliApp, add_json_flag
from .parsers import Subparsers


def cmd_pair(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.engine.pairing import pair_datasets

    report = pair_datasets(app.library, args.a, args.b, args.name)
    if args.json:
        app.print_json(report)
        return 0
    print(f"dataset {report['dataset']}: {report['paired']} pairs (completion_a from {args.a}, completion_b "
          f"from {args.b}); {report['only_in_a']} only in {args.a}, {report['only_in_b']} only in {args.b}")
    if report["different_prompts"]:
        print(f"left out, same id but a different prompt: {', '.join(report['different_prompts'][:20])}")
    return 0


def register_pair(dsub: Subparsers) -> None:
    p = dsub.add_parser("pair", help="pair two datasets' completions of the same samples (for a pairwise judge)")
    p.add_argument("a", help="dataset whose completions become answer A")
    p.add_argument("b", help="dataset whose completions become answer B")
    p.add_argument("--name", required=True, help="name of the paired dataset")
    add_json_flag(p)
    p.set_defaults(func=cmd_pair)
