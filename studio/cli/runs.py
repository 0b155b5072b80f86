"""``grader-studio run`` and ``grader-studio runs ...``: grade a dataset headless, inspect the results.

``run --progress-jsonl`` is the machine face of a run (the window starts its runs this way, in a child
process): standard output carries one JSON object a line, flushed as it happens::

    {"event": "started", "run_id": 7, "total": 20000, "done": 0, "pid": 4242}
    {"event": "progress", "run_id": 7, "done": 2000, "total": 20000, "counts": {"ok": 2000},
     "elapsed": 0.1, "rate": 20000.0, "eta": 0.9, "written": [0, 1, ...], "finished": false}
    {"event": "summary", "summary": {...as run --json...}, "run": {...RunInfo...}, "exit_code": 0}
    {"event": "error", "error": "NotFound", "user_error": true, "message": "..."}

"started" comes once the SIGINT handler is in place: from then on SIGINT cancels the run (everything
graded so far is kept, the run ends "cancelled" and the summary line still comes). A run that cannot
start or breaks ends with an "error" line (and, for a bug, the traceback on stderr) instead of a summary.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from studio.core.engine import events
from studio.core.engine.grading import RunEvent, RunStarted, grade
from studio.core.engine.progress import Progress
from studio.core.engine.request import RunRequest, conclude
from studio.core.engine.verdict import NO_OVERALL
from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import RunInfo
from studio.core.models.broken import BrokenRow
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, NOT_PASSED, decide_result, word
from studio.core.safe_files import open_text

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag, resume_gc
from .broken import broken_json, say_broken
from .ci import json_fields, print_outcome, reports_of, request_of
from .parsers import Subparsers
from .tables import Column, print_table

if TYPE_CHECKING:
    from studio.core.engine.sections import RunSections
    from studio.core.engine.summary import GraderSummary
    from studio.core.store import Library

# what a run prints once graded (the run's sections, its summary, the results' reports, ``runs
# show``) is imported by the function printing it: not before a run's first judge call (issue 32)

#: a suite run's rows: one per sample and grader, with the columns a run of one grader shows
SUITE_COLUMNS = (Column("#", right=True), Column("SAMPLE"), Column("GRADER"), Column("RESULT", colour=True),
                 Column("SCORE", right=True), Column("INPUT", flexible=True), Column("OUTPUT", flexible=True),
                 Column("EXPECTED", flexible=True), Column("WHY", flexible=True))


class ProgressBar:
    """One redrawn line on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream  # read when made: not the stderr of whoever imported this first
        self.enabled = self.stream.isatty()

    def __call__(self, progress: Progress) -> None:
        if not self.enabled:
            return
        total = max(progress.total, 1)
        width = 30
        filled = int(width * progress.done / total)
        eta = f"{progress.eta:5.0f}s" if progress.eta is not None else "   --"
        errors = progress.counts.get("error", 0) + progress.counts.get("invalid", 0)
        calls = "" if progress.in_flight is None else f" calls in flight {progress.in_flight:3d}"
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total} "
            f"{progress.rate:8.0f}/s eta {eta} errors {errors}{calls}"
        )
        if progress.finished:
            self.stream.write("\n")
        self.stream.flush()


def _print_summary(info: RunInfo, library: Library | None = None, run: RunSections | None = None) -> None:
    """The run's summary for a terminal: every figure from its one summary (engine/summary.py)
    when the library (or the run's sections) is given, else the aggregates as stored."""
    from studio.core.engine.sections import load_run
    from studio.core.engine.summary import stored_summary

    from .run_report import figures

    if run is None and library is not None:
        run = load_run(library, info.id)
    agg = figures(run) if run is not None else stored_summary(info)
    if info.suite is not None:
        name = info.suite.get("key") or "graders " + ",".join(info.suite.get("graders") or [])
        version = f" v{info.suite['version']}" if info.suite.get("version") else ""
        print(f"run {info.id}: {info.status}  suite {name}{version} on {info.dataset}")
    else:
        print(f"run {info.id}: {info.status}  {info.grader_key} v{info.grader_version} on {info.dataset}")
    print(f"  samples {info.done}/{info.total}  " + "  ".join(f"{k} {v}" for k, v in sorted(info.counts.items())))
    if run is not None and run.suite:
        for found in run.summaries:
            print(f"  {_grader_line(found)}")
        if run.overall is not None:
            grader = (info.suite or {}).get("overall_grader")
            print(f"  overall score ({run.rule}{f': {grader}' if grader else ''}): {_grader_line(run.overall, False)}")
    elif run is not None and run.headline is not None:
        print(f"  {_grader_line(run.headline, False)}")
    elif agg.mean is not None:
        print(f"  mean {agg.mean:.4f}  pass rate {agg.pass_rate_text() or 'n/a'}"
              f" (score >= {agg.pass_threshold})")
    if info.suite is None:  # a suite's "metrics" are its graders' means, printed above
        for key, value in sorted(agg.metrics.items()):
            print(f"  metric {key}: {'n/a' if value is None else f'{value:.4f}'}")  # (None: a sum past a double)
    for key, value in sorted(agg.batch_metrics.items()):
        print(f"  batch metric {key}: {value}")
    if agg.pairwise or agg.jury:
        from .panels import print_panels

        print_panels(agg)
    if agg.stopped:
        print(f"  {agg.stopped}")
    where = agg.executor
    if where:
        if where.get("placement") == "cluster":
            modes = ", ".join(f"{m} x{n}" for m, n in sorted((where.get("node_isolation") or {}).items()))
            print(f"  graded on {where.get('where')}: {where.get('actors')} actor(s) (sandbox: {modes or 'none started'}), "
                  f"{where.get('blocks')} blocks, {where.get('blocks_rerun')} re-run after {where.get('actors_lost')} "
                  f"lost actors, {where.get('duplicates_refused')} duplicate writes refused")
        else:
            print(f"  graded on this machine: {where.get('reason')}")


class JsonLines:
    """The ``--progress-jsonl`` stream: one compact JSON object a line, flushed at once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def emit(self, event: str, **fields: JsonValue) -> None:
        stream = self.stream or sys.stdout
        stream.write(events.encode(event, **fields) + "\n")
        stream.flush()

    def __call__(self, progress: Progress) -> None:
        self.emit("progress", **events.progress_fields(progress))

    def error(self, exc: BaseException) -> None:
        self.emit("error", **events.error_fields(exc))


def _cancel_on_stdin_eof(cancel: threading.Event) -> None:
    """The window keeps our stdin open while it lives: EOF means it is gone, so stop grading."""

    def watch() -> None:
        # the file descriptor itself, not sys.stdin's buffered reader: this daemon thread is still
        # blocked in its read when the run ends, and a reader's lock held at interpreter shutdown
        # is a fatal error (the child aborted, SIGABRT and a core dump, after every window run)
        with contextlib.suppress(OSError, ValueError):
            while os.read(sys.stdin.fileno(), 4096):
                pass
        cancel.set()

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


class RunWatch:
    """What the CLI owns while its run grades, set up before the request goes to the engine: the
    cancel event, and where the run's events go (``grading.RunEvent``). When the run has started
    (``RunStarted``: it exists and its executor is ready) Ctrl-C cancels it (everything graded so
    far is kept; a second Ctrl-C aborts at once), the window closing our stdin cancels it too, the
    header says where a cluster grades, and ``--progress-jsonl`` writes its "started" line; then
    each ``Progress`` goes to the stream, or the terminal's bar. Leaving puts Ctrl-C back."""

    def __init__(self, stream: JsonLines | None, quiet: bool, watch_stdin: bool) -> None:
        self.stream = stream
        self.quiet = quiet or stream is not None  # the header is for a person at a terminal
        self.watch_stdin = watch_stdin
        self.cancel = threading.Event()
        self.on_progress: Callable[[Progress], None] | None = stream or (None if quiet else ProgressBar())
        self.run_id: int | None = None
        self._previous: Callable[[int, FrameType | None], object] | int | None = None

    def __enter__(self) -> RunWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, RunStarted):
            self._started(event)
        elif self.on_progress is not None:
            self.on_progress(event)

    def _started(self, started: RunStarted) -> None:
        resume_gc()  # start-up is over (the grader's kind and its scorer's modules are imported): app.pause_gc
        self.run_id = started.run_id
        if started.where is not None and not self.quiet:
            print(f"run {started.run_id}: {started.where}", file=sys.stderr)
        if self.watch_stdin:
            _cancel_on_stdin_eof(self.cancel)
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        if self.stream is not None:
            extra: JsonObject = {} if started.where is None else {"where": started.where}
            self.stream.emit("started", run_id=started.run_id, total=started.total, done=started.done,
                             pid=os.getpid(), **extra)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        print(f"\ncancelling run {self.run_id} (Ctrl-C again to abort at once)...", file=sys.stderr)


@contextlib.contextmanager
def _reported(stream: JsonLines | None) -> Iterator[None]:
    """With ``--progress-jsonl``, whatever stops the run before its summary is an "error" line
    (a bug still leaves its traceback on stderr)."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if stream is not None:
            stream.error(exc.__cause__ if isinstance(exc, CliError) and exc.__cause__ is not None else exc)
        raise


def cmd_run(args: argparse.Namespace, app: CliApp) -> int:
    """``run``: its arguments become one run request here, once; each way of running it takes that
    request. A dry run grades nothing; the others (repeat, grade: generating the outputs first with
    ``--generate-with``) take the same steps before grading: what the way refuses, then the sandbox's
    opt-in and notice (cli/sandbox_notice.py), before a generation spends anything or a run exists."""
    stream = JsonLines() if args.progress_jsonl else None
    with _reported(stream):  # a value refused as the request is made is the stream's error line too
        request = request_of(args)
    if args.generate_with is None and args.dry_run:  # (--repeat N: the calls of N runs)
        from .dry import run_dry

        return run_dry(args, app, request)
    if args.generate_with is not None:
        from .generate import generation_asked

        generation_asked(args, request)  # (refuses --dry-run and --repeat)
    elif args.repeat is not None:
        from .repeat import repeat_asked

        repeat_asked(args, request)
    from .sandbox_notice import warn_if_degraded

    with _reported(stream):
        warn_if_degraded(app, request, bool(getattr(args, "allow_unsandboxed", False)), stream)
    if args.repeat is not None:
        from .repeat import run_repeated

        return run_repeated(args, app, request)
    return grade_request(args, app, request, stream)


def grade_request(args: argparse.Namespace, app: CliApp, request: RunRequest, stream: JsonLines | None) -> int:
    """Grade the request and print it. What the CLI owns is set up first (how it prints, the cancel
    event and where the run's events go; with ``--generate-with``, the outputs generated); the
    engine then checks, records, grades and concludes the run (verdict, usage, report files) in one
    call (``grading.grade``), and what comes back is printed once. ``args`` only says how to print
    (``--json``, ``--progress-jsonl``, stdin) and what to generate."""
    watch = RunWatch(stream, quiet=args.json, watch_stdin=args.cancel_on_stdin_eof)
    generation = None
    if args.generate_with is not None:
        from .generate import generate_first

        generation = generate_first(args, app, request)
        request = generation.request
    with _reported(stream), watch:  # anything refused before grading exits 2 and leaves no run behind
        done = grade(app.library, request, cancel=watch.cancel, on_event=watch,
                     github=sys.stderr if (args.json or stream) else sys.stdout)
    from .run_report import summary

    info = done.run.info
    code = done.verdict.exit_code
    report = {**summary(info, run=done.run), **json_fields(done)} if (stream or args.json) else {}
    if stream is not None:
        stream.emit("summary", summary=report, run=info.model_dump(mode="json"), exit_code=code)
    elif args.json and generation is None:
        app.print_json(report)
    elif not args.json:
        _print_summary(info, run=done.run)
    if stream is None:
        print_outcome(done, usage_lines=not args.json)
    if generation is not None:  # its cost beside the judging's, after the verdict (as the report with it)
        generation.show(app, report if args.json else None, done.usage.cost)
    return code


def _grader_line(found: GraderSummary, named: bool = True) -> str:
    """``key vN: mean 0.4000 [0.2750, 0.5250]  pass rate 40.0% [28.6%, 52.6%] (>= 0.5)  n 60  ok 58 error 2``."""
    mean = "none" if found.mean is None else f"{found.mean:.4f}"
    ci = found.interval_text()
    rate = "" if found.pass_rate is None else f"  pass rate {found.pass_rate_text()} (>= {found.threshold:g})"
    counts = "  ".join(f"{k} {v}" for k, v in found.counts.items() if v)
    return (f"{found.label}: " if named else "") + f"mean {mean}{' ' + ci if ci else ''}{rate}  n {found.n}" + (
        f"  {counts}" if counts else "")


def _show_suite(args: argparse.Namespace, app: CliApp, info: RunInfo) -> int:
    """``runs show`` of a suite run: each grader's result per sample (``grader`` names it), judged by
    the pass rule at that grader's threshold, with the sample's input, output and expected (as a
    run of one grader shows them), and the sample's overall row."""
    from studio.core.engine.sections import load_run
    from studio.core.store.reports import iter_records, result_record, run_query
    from studio.core.store.run_graders import graders_with_results

    from .run_report import summary

    per = graders_with_results(app.library, info.id)
    texts = {r["index"]: r for r in iter_records(app.library.engine, run_query(app.library, info.id))}
    by_sample: dict[int, list[JsonObject]] = {}
    for grader, rows in per:
        for row in rows:
            decision = decide_result(row, grader.threshold)
            if args.errors and row["status"] not in ("error", "invalid"):
                continue
            if args.failed and decision not in NOT_PASSED:
                continue
            by_sample.setdefault(row["sample_idx"], []).append(
                {**row, "result": word(row["status"], decision), "threshold": grader.threshold})
    results = [r for idx in sorted(by_sample) for r in by_sample[idx]]
    records = [{"grader": r["grader"], "result": r["result"], "threshold": r["threshold"], **result_record(r),
                **{k: (texts.get(r["sample_idx"]) or {}).get(k) for k in ("input", "completion", "expected")}}
               for r in results]
    run = load_run(app.library, info.id)
    usage = run.usage  # per grader and per endpoint
    if args.json:
        overall = [result_record(r) for r in app.library.runs.results(info.id, failed_only=args.failed)]
        app.print_json({"run": {**summary(info, run=run), "usage": usage.to_json()}, "results": records,
                        "overall": overall})
        return 0
    _print_summary(info, run=run)
    for line in usage.lines():
        print(line)
    print()
    if not records:
        which = "errors or invalid results" if args.errors else "failed results" if args.failed else "results"
        print(f"run {info.id} has no {which}.")
        return 0
    print_table(
        [[r["index"], r["sample_id"], r["grader"], r["result"], "" if r["score"] is None else f"{r['score']:.4f}",
          r["input"] or "", r["completion"] or "", r["expected"] or "", r["error"] or r["rationale"] or ""]
         for r in records],
        SUITE_COLUMNS,
    )
    return 0


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    from .run_report import summary
    from .run_show import print_runs

    entries = app.library.runs.listing(grader_key=args.grader)
    infos = [e for e in entries if not isinstance(e, BrokenRow)]
    broken = [e for e in entries if isinstance(e, BrokenRow)]
    if args.json:
        app.print_json([summary(i) for i in infos] + [broken_json(b) for b in broken])
        return 0
    print_runs(infos)
    say_broken(broken)
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    from .run_report import summary
    from .run_show import cmd_show as show_run

    info = app.library.runs.get(args.run_id)
    if getattr(args, "adjudicated", False):  # review queues' settlements (studio/cli/queues.py)
        from .queues import AdjudicatedFaces

        faces = AdjudicatedFaces(app, info.id, summary, _print_summary)
        if info.suite is None or args.sample is not None:
            return show_run(args, app, faces.json_summary, faces.terminal_summary, info)
        if args.json:
            raise CliError("--adjudicated with --json reads a run of one grader; for a suite run, "
                           "`grader-studio queues agreement` gives each judge's figures", 2)
        faces.say_both(then="the suite's figures below: as judged")
    if info.suite is not None and args.sample is None:
        return _show_suite(args, app, info)
    return show_run(args, app, summary, _print_summary, info)


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    """Streamed from one SQL cursor: a million results cost a cursor, not a million dicts in memory."""
    from studio.core.store.reports import run_query, write_results

    if args.format == "html":  # one self-contained page to share (cli/share_html.py)
        from .share_html import export_run_html

        return export_run_html(args, app, _print_summary)

    query = run_query(app.library, args.run_id)  # an unknown run fails before any file is made
    try:
        if args.output:
            with open_text(args.output, newline="") as out:  # never through a planted link
                count = write_results(app.library.engine, query, out, args.format, raw=args.raw_csv)
            print(f"wrote {count} results to {args.output}", file=sys.stderr)
        else:
            write_results(app.library.engine, query, sys.stdout, args.format, raw=args.raw_csv)
    except OSError as exc:
        raise CliError(f"cannot write {exc.filename}: {exc.strerror}") from None
    return 0


def add_ci_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-under", action="append", metavar="[KEY=]SCORE",
                   help="exit 1 when the run's mean score (a suite's overall score; or with KEY=, that "
                        "grader's mean) is below SCORE; repeatable. " + NO_OVERALL.replace("%", "%%"))
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (one testcase a sample)")
    p.add_argument("--markdown", metavar="FILE",
                   help="write a markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)")
    p.add_argument("--baseline", type=int, metavar="RUN_ID",
                   help="compare with this earlier run of the same dataset in the markdown summary")
    p.add_argument("--github", action="store_true",
                   help="GitHub workflow commands (::error/::warning annotations), at most 50 lines")


def cmd_report(args: argparse.Namespace, app: CliApp) -> int:
    """The reports and verdict of an existing run, as ``run`` would have given them."""
    from .run_report import summary

    info = app.library.runs.get(args.run_id)
    checked = RunRequest(resume=info.id, fail_under=list(args.fail_under or []), reports=reports_of(args)).check(
        app.library)
    done = conclude(app.library, info.id, checked, github=sys.stderr if args.json else sys.stdout)
    if args.json:
        app.print_json({**summary(done.run.info, run=done.run), **json_fields(done)})
    else:
        _print_summary(done.run.info, run=done.run)
        from .openai_evals import criteria_table

        print("\n".join(criteria_table(done.run)))
    print_outcome(done, usage_lines=not args.json)
    return done.verdict.exit_code


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help=COMMAND_HELP["run"])
    p.add_argument("grader", nargs="?", help="grader or suite key")
    p.add_argument("--graders", metavar="A,B,C", help="a one-off suite of these graders (then: run --graders a,b DATASET)")
    p.add_argument("--overall", metavar="RULE", help="with --graders: mean, all-pass or a composite grader's key")
    p.add_argument("dataset", nargs="?", help="dataset name")
    p.add_argument("--version", type=int, help="grader version (default: current)")
    p.add_argument("--limit", type=int, help="grade only the first N samples")
    p.add_argument("--concurrency", type=int, help="parallel judge calls / sandbox workers")
    p.add_argument("--endpoint", help="judge endpoint for this run (overrides the grader's)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached judge responses")
    p.add_argument("--pass-threshold", type=float, default=DEFAULT_PASS_THRESHOLD,
                   help=f"score counted as a pass (default {DEFAULT_PASS_THRESHOLD:g})")
    add_ci_flags(p)
    p.add_argument("--dry-run", action="store_true",
                   help="grade nothing: print the judge calls, tokens and cost range the run would have")
    p.add_argument("--max-cost", metavar="USD", help="stop starting judge calls once the run has spent this much")
    p.add_argument("--max-tokens", type=int, metavar="N", help="stop starting judge calls after N tokens")
    p.add_argument("--resume", type=int, metavar="RUN_ID", help="finish an interrupted run")
    p.add_argument("--retry-errors", action="store_true",
                   help="with --resume: grade the samples whose result is an error again (a completed run's too)")
    p.add_argument("--repeat", type=int, metavar="N",
                   help="grade each sample N times (cache bypassed) and report the judge's self-agreement")
    p.add_argument("--executor", choices=("local", "ray"),
                   help="where to grade: this machine (default) or a Ray cluster (pip install 'grader-studio[ray]')")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="the Ray cluster (default: $RAY_ADDRESS, else a local Ray started for the run)")
    p.add_argument("--cancel-on-stdin-eof", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--keep-going", action="store_true",
                   help="grade every sample even when the first ones all fail the same way")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="run function/bash graders without bubblewrap (weaker isolation; you trust the grader)")
    p.add_argument("--generate-with", metavar="ENDPOINT",
                   help="first generate DATASET's outputs with this endpoint (the model under test), then grade them")
    p.add_argument("--generate-name", metavar="NEW", help="with --generate-with: the generated dataset's name "
                   "(default DATASET-ENDPOINT; an unfinished one is resumed, a finished one reused)")
    p.add_argument("--generate-model", metavar="M", help="with --generate-with: the model (default: the endpoint's)")
    p.add_argument("--progress-jsonl", action="store_true",
                   help="machine-readable progress: one JSON object a line on stdout, ending with the summary")
    add_json_flag(p)
    p.set_defaults(func=cmd_run, refusal_code=2)  # a run refused or not done exits 2 (engine/verdict.py)

    runs = sub.add_parser("runs", help=COMMAND_HELP["runs"])
    rsub = runs.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = rsub.add_parser("list", help="recent runs")
    p.add_argument("--grader", help="only runs of this grader")
    add_json_flag(p)
    p.set_defaults(func=cmd_list)
    p = rsub.add_parser("show", help="a run's summary and per-sample results")
    p.add_argument("run_id", type=int)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--failed", action="store_true",
                       help="only results that did not pass: below the pass threshold, FAIL, error or invalid")
    which.add_argument("--errors", action="store_true", help="only errors and invalid results")
    which.add_argument("--sample", metavar="SAMPLE_ID",
                       help="one sample whole: its thread, the reference, the score and the full rationale")
    p.add_argument("--limit", type=int, metavar="N",
                   help="print the first N results (default 50 on a terminal, every one with --json; 0: all)")
    p.add_argument("--adjudicated", action="store_true",
                   help="also the pass rate as adjudicated: review queues' settlements in place of the judge's "
                        "verdicts (each figure says which it is; the stored results are unchanged)")
    add_json_flag(p)
    p.set_defaults(func=cmd_show)
    p = rsub.add_parser("report", help="a finished run's verdict and CI reports (JUnit, markdown, GitHub)")
    p.add_argument("run_id", type=int)
    add_ci_flags(p)
    add_json_flag(p)
    p.set_defaults(func=cmd_report, refusal_code=2)
    p = rsub.add_parser("export", help="write a run's results as CSV or JSONL, or one HTML page to share")
    p.add_argument("run_id", type=int)
    p.add_argument("--format", choices=("csv", "jsonl", "html"), default="csv")
    p.add_argument("--raw-csv", action="store_true",
                   help="write CSV cells as stored: no leading ' before a cell a spreadsheet reads as a formula")
    p.add_argument("-o", "--output", help="file (default: standard output)")
    from .share_html import add_compare_html_flags, add_cut_flags

    add_cut_flags(p)
    p.set_defaults(func=cmd_export)
    from .agreement import add_compare_parser
    from .openai_evals import register_runs

    add_compare_html_flags(add_compare_parser(rsub, "compare"), _print_summary)  # --html: one page to share
    register_runs(rsub)  # runs compare-external (an imported OpenAI eval's run beside OpenAI's results)
