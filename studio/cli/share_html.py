"""``runs export RUN --format html`` and ``runs compare A B --html``: a run as one HTML file to share.

The page's header is what ``runs show`` prints and ``runs show --json`` gives (``run_header``: the
same ``summary`` and the same terminal lines, read from the run's one summary), so a reader of the
file sees the numbers the studio shows; the rest is studio/core/engine/reports/viewer.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject
from studio.core.safe_files import open_text

from .app import CliApp, CliError

if TYPE_CHECKING:
    from studio.core.engine.reports.viewer import Cut

#: ``runs show``'s summary printer (cli/runs.py ``_print_summary``)
PrintSummary = Callable[..., None]


def add_cut_flags(p: argparse.ArgumentParser) -> None:
    """The options that make an HTML file smaller (docs/viewer.md); the file states what was cut."""
    p.add_argument("--no-prompts", action="store_true",
                   help="html: leave out the judges' exact prompts and raw answers (the biggest part of a big run)")
    p.add_argument("--cut-text", type=_cut_length, metavar="N",
                   help="html: cut every text (input, output, rationale, prompt) longer than N characters")


def _cut_length(text: str) -> int:
    """``--cut-text``'s N, refused by argparse (exit 2, with the usage) when it is no length to cut to."""
    from studio.core.engine.reports.viewer.pack import MIN_CUT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of characters, not {text!r}") from None
    if value < MIN_CUT:
        raise argparse.ArgumentTypeError(f"{MIN_CUT} characters or more, not {value}")
    return value


def add_compare_html_flags(p: argparse.ArgumentParser, print_summary: PrintSummary) -> None:
    """``runs compare``'s ``--html``; ``print_summary``: ``runs show``'s (cli/runs.py, which imports
    this module: it hands its printer in rather than be imported back)."""
    p.set_defaults(print_summary=print_summary)
    p.add_argument("--html", action="store_true", help="write the comparison as one self-contained HTML file (-o FILE)")
    p.add_argument("-o", "--output", metavar="FILE", help="with --html: the file (default: standard output)")
    add_cut_flags(p)


def _cut(args: argparse.Namespace) -> Cut:
    from studio.core.engine.reports.viewer import Cut

    return Cut(prompts=not args.no_prompts, text_chars=args.cut_text).checked()


def run_header(app: CliApp, run_id: int, print_summary: PrintSummary) -> tuple[JsonObject, str]:
    """``runs show --json``'s "run" object and the summary lines ``runs show`` prints (``print_summary``
    is its printer), from one read of the run's summary."""
    from studio.core.engine.sections import load_run

    from .run_report import summary

    info = app.library.runs.get(run_id)
    run = load_run(app.library, info.id, info=info)
    head = {**summary(info, run=run), "usage": run.usage.to_json()}
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_summary(info, run=run)
        for line in run.usage.lines():
            print(line)
    return head, text.getvalue().rstrip("\n")


def _write(args: argparse.Namespace, page: str, what: str) -> int:
    try:
        if args.output:
            with open_text(args.output) as out:  # never through a planted link
                out.write(page)
            print(f"wrote {what} to {args.output} ({len(page.encode('utf-8')) / 1e6:.1f} MB)", file=sys.stderr)
        else:
            sys.stdout.write(page)
    except OSError as exc:
        raise CliError(f"cannot write {exc.filename}: {exc.strerror}") from None
    return 0


def export_run_html(args: argparse.Namespace, app: CliApp, print_summary: PrintSummary) -> int:
    from studio.core.engine.reports.viewer import run_page

    cut = _cut(args)
    head, text = run_header(app, args.run_id, print_summary)  # an unknown run fails before any file is made
    return _write(args, run_page(app.library, args.run_id, head, text, cut), f"run {args.run_id}'s page")


def compare_html(args: argparse.Namespace, app: CliApp, report: JsonObject) -> int:
    from studio.core.engine.reports.viewer import compare_page

    cut = _cut(args)
    (head_a, text_a), (head_b, text_b) = (run_header(app, args.run_a, args.print_summary),
                                          run_header(app, args.run_b, args.print_summary))
    page = compare_page(app.library, args.run_a, args.run_b, report, (head_a, head_b), (text_a, text_b), cut)
    return _write(args, page, f"the comparison of runs {args.run_a} and {args.run_b}")
