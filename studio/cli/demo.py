"""``grader-studio demo``: write the demo library (and, with --open, open the window on it)."""

from __future__ import annotations

import argparse

from studio.core.demo import build_demo

from .app import COMMAND_HELP, CliApp, add_json_flag
from .parsers import Subparsers


def cmd_demo(args: argparse.Namespace, app: CliApp) -> int:
    report = build_demo(app.library)
    from studio.core.demo import DEMO_JUDGE_PORT
    from studio.core.demo.run import seed_demo_run

    seeded = seed_demo_run(app.library, DEMO_JUDGE_PORT)  # fills the agreement view on first open
    if args.json:
        app.print_json(report.model_dump())
    else:
        print(f"demo library at {app.where()}")
        print(f"  graders: {len(report.graders_created)} created, {len(report.graders_kept)} already there")
        for name, count in report.datasets.items():
            print(f"  dataset {name}: {count} samples")
        if seeded is not None:
            print(f"  run {seeded.id}: {seeded.grader_key} on {seeded.dataset}, to compare with the demo's "
                  f"human labels (`grader-studio agreement {seeded.id}`)")
        if report.endpoint:
            print(f"  endpoint {report.endpoint}: a scripted fake judge (not a model); "
                  "`grader-studio fake-judge` serves it")
            from studio.core.demo import DEMO_MODELS

            print(f"  endpoints {', '.join(DEMO_MODELS)}: scripted models under test (canned answers, not "
                  "models) on the same server, for `grader-studio generate` (docs/generate.md)")
        from studio.core.paths import demo_dir

        folder = demo_dir() / "openai"  # an OpenAI eval with one grader of every type (docs/openai.md)
        print(f"  OpenAI eval: grader-studio import {folder / 'support.eval.json'} --items "
              f"{folder / 'support.items.jsonl'}, then grader-studio run support-answers support-answers")
    if args.open:
        from studio.ui import launch

        app.close()
        return launch(app.db_path(), serve_demo_judge=True)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help=COMMAND_HELP["demo"])
    p.add_argument("--open", action="store_true", help="then open the studio window on it")
    add_json_flag(p)
    p.set_defaults(func=cmd_demo)
