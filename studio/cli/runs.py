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
from collections.abc import Callable
from typing import Any, TextIO

from studio.core.engine import events
from studio.core.engine.executors import RAY_HINT, ExecutorError, make_executor, ray_available
from studio.core.engine.runner import Progress, RunOptions, execute_run, start_run
from studio.core.graders.registry import UnsupportedGrader
from studio.core.models import RunInfo
from studio.core.store import LibraryError
from studio.core.store.reports import run_query, write_results

from .app import CliApp, CliError, add_json_flag
from .run_show import cmd_show as show_run
from .run_show import print_runs


class ProgressBar:
    """One redrawn line on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = stream.isatty()

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


def summary(info: RunInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "status": info.status,
        "grader": info.grader_key,
        "grader_version": info.grader_version,
        "dataset": info.dataset,
        "endpoint": info.endpoint,
        "total": info.total,
        "done": info.done,
        "counts": info.counts,
        "aggregates": info.aggregates,
        "created_at": info.created_at.isoformat(),
        "finished_at": info.finished_at.isoformat() if info.finished_at else None,
    }


def _print_summary(info: RunInfo) -> None:
    agg = info.aggregates
    mean = agg.get("mean")
    rate = agg.get("pass_rate")
    print(f"run {info.id}: {info.status}  {info.grader_key} v{info.grader_version} on {info.dataset}")
    print(f"  samples {info.done}/{info.total}  " + "  ".join(f"{k} {v}" for k, v in sorted(info.counts.items())))
    if mean is not None:
        print(f"  mean {mean:.4f}  pass rate {rate:.1%} (score >= {agg.get('pass_threshold')})")
    for key, value in sorted((agg.get("metrics") or {}).items()):
        print(f"  metric {key}: {value:.4f}")
    for key, value in sorted((agg.get("batch_metrics") or {}).items()):
        print(f"  batch metric {key}: {value}")
    if agg.get("stopped"):
        print(f"  {agg['stopped']}")
    where = agg.get("executor")
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

    def emit(self, event: str, **fields: Any) -> None:
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
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        cancel.set()

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def _executor_for(app: CliApp, run_id: int, quiet: bool) -> tuple[Any, str | None]:
    """The run's executor, connected; and for a cluster, the header line saying where it grades."""
    info = app.library.runs.get(run_id)
    options = RunOptions.model_validate(info.settings)
    executor = make_executor(options.executor, options.ray_address)
    if options.executor == "local":
        return executor, None
    definition = app.library.graders.version(info.grader_key, info.grader_version).definition
    where = executor.header(definition)  # type: ignore[attr-defined]  # joins the cluster if it grades there
    if not quiet:
        print(f"run {run_id}: {where}", file=sys.stderr)
    return executor, where


def _execute(app: CliApp, run_id: int, quiet: bool, stream: JsonLines | None = None,
             watch_stdin: bool = False, keep_going: bool | None = None) -> RunInfo:
    executor, where = _executor_for(app, run_id, quiet or stream is not None)
    cancel = threading.Event()
    if watch_stdin:
        _cancel_on_stdin_eof(cancel)

    def on_sigint(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print(f"\ncancelling run {run_id} (Ctrl-C again to abort at once)...", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
    on_progress: Callable[[Progress], None] | None = stream or (None if quiet else ProgressBar())
    try:
        if stream is not None:
            info = app.library.runs.get(run_id)
            extra = {} if where is None else {"where": where}
            stream.emit("started", run_id=run_id, total=info.total, done=info.done, pid=os.getpid(), **extra)
        return execute_run(app.library, run_id, on_progress=on_progress, cancel=cancel, keep_going=keep_going,
                           executor=executor)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _verdict(info: RunInfo, fail_under: float | None) -> dict[str, Any]:
    """Why ``run`` exits as it does: the mean, the threshold, and each reason for a failure."""
    reasons: list[str] = []
    if info.status != "completed":
        reasons.append(f"the run ended {info.status}")
    errored = info.counts.get("error", 0) + info.counts.get("invalid", 0)
    if errored:
        reasons.append(f"{errored} sample(s) errored or were invalid")
    mean = info.aggregates.get("mean")
    if fail_under is not None:
        if mean is None:
            reasons.append(f"no mean score to compare with --fail-under {fail_under:g}")
        elif mean < fail_under:
            reasons.append(f"mean {mean:.4f} is below --fail-under {fail_under:g}")
    return {"passed": not reasons, "mean": mean, "fail_under": fail_under, "reasons": reasons}


def _print_verdict(verdict: dict[str, Any]) -> None:
    """One line on stderr, so a CI log says why the step failed (or what it checked)."""
    if verdict["passed"] and verdict["fail_under"] is None:
        return
    mean = "none" if verdict["mean"] is None else f"{verdict['mean']:.4f}"
    threshold = "" if verdict["fail_under"] is None else f", threshold {verdict['fail_under']:g}"
    outcome = "PASS" if verdict["passed"] else "FAIL: " + "; ".join(verdict["reasons"])
    print(f"verdict: mean {mean}{threshold}: {outcome}", file=sys.stderr)


def cmd_run(args: argparse.Namespace, app: CliApp) -> int:
    if args.repeat is not None:
        from .repeat import run_repeated

        return run_repeated(args, app)
    stream = JsonLines() if args.progress_jsonl else None
    try:
        info = _run(args, app, stream)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if stream is not None:  # a bug still leaves its traceback on stderr
            stream.error(exc.__cause__ if isinstance(exc, CliError) and exc.__cause__ is not None else exc)
        raise
    verdict = _verdict(info, args.fail_under)
    code = 0 if verdict["passed"] else 1
    if stream is not None:
        stream.emit("summary", summary={**summary(info), "verdict": verdict}, run=info.model_dump(mode="json"),
                    exit_code=code)
    elif args.json:
        app.print_json({**summary(info), "verdict": verdict})
    else:
        _print_summary(info)
    if stream is None:
        _print_verdict(verdict)
    return code


def _run(args: argparse.Namespace, app: CliApp, stream: JsonLines | None) -> RunInfo:
    from .sandbox_notice import warn_if_degraded

    warn_if_degraded(app, args, stream)
    try:
        if args.resume is not None:
            if args.grader or args.dataset:
                raise CliError("--resume takes a run id alone", code=2)
            run_id = args.resume
            if args.executor is not None or args.ray_address is not None:
                chosen = args.executor or "ray"  # --ray-address alone means the cluster
                _check_executor(chosen)
                app.library.runs.update_settings(run_id, {"executor": chosen, "ray_address": args.ray_address})
        else:
            if not (args.grader and args.dataset):
                raise CliError("run needs GRADER and DATASET (or --resume RUN_ID)", code=2)
            executor = args.executor or ("ray" if args.ray_address else "local")
            _check_executor(executor)
            options = RunOptions(version=args.version, limit=args.limit, concurrency=args.concurrency,
                                 endpoint=args.endpoint, use_cache=not args.no_cache,
                                 pass_threshold=args.pass_threshold, keep_going=args.keep_going,
                                 executor=executor, ray_address=args.ray_address)
            run_id = start_run(app.library, args.grader, args.dataset, options).id
        return _execute(app, run_id, quiet=args.json, stream=stream, watch_stdin=args.cancel_on_stdin_eof,
                        keep_going=args.keep_going or None)
    except (LibraryError, UnsupportedGrader, ExecutorError) as exc:
        raise CliError(str(exc)) from exc


def _check_executor(name: str | None) -> None:
    """``--executor ray`` without Ray installed: the sentence saying how to get it, before any run exists."""
    if name == "ray" and not ray_available():
        raise ExecutorError(RAY_HINT)


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    infos = app.library.runs.list(grader_key=args.grader)
    if args.json:
        app.print_json([summary(i) for i in infos])
        return 0
    print_runs(infos)
    return 0


def cmd_show(args: argparse.Namespace, app: CliApp) -> int:
    return show_run(args, app, summary, _print_summary)


def cmd_export(args: argparse.Namespace, app: CliApp) -> int:
    """Streamed from one SQL cursor: a million results cost a cursor, not a million dicts in memory."""
    try:
        query = run_query(app.library, args.run_id)  # an unknown run fails before any file is made
        if args.output:
            with open(args.output, "w", encoding="utf-8", newline="") as out:
                count = write_results(app.library.engine, query, out, args.format)
            print(f"wrote {count} results to {args.output}", file=sys.stderr)
        else:
            write_results(app.library.engine, query, sys.stdout, args.format)
    except LibraryError as exc:
        raise CliError(str(exc)) from None
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="run a grader over a dataset and store the results")
    p.add_argument("grader", nargs="?", help="grader key")
    p.add_argument("dataset", nargs="?", help="dataset name")
    p.add_argument("--version", type=int, help="grader version (default: current)")
    p.add_argument("--limit", type=int, help="grade only the first N samples")
    p.add_argument("--concurrency", type=int, help="parallel judge calls / sandbox workers")
    p.add_argument("--endpoint", help="judge endpoint for this run (overrides the grader's)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached judge responses")
    p.add_argument("--pass-threshold", type=float, default=0.5, help="score counted as a pass (default 0.5)")
    p.add_argument("--fail-under", type=float, help="exit 1 when the mean score is below this")
    p.add_argument("--resume", type=int, metavar="RUN_ID", help="finish an interrupted run")
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
    p.add_argument("--progress-jsonl", action="store_true",
                   help="machine-readable progress: one JSON object a line on stdout, ending with the summary")
    add_json_flag(p)
    p.set_defaults(func=cmd_run)

    runs = sub.add_parser("runs", help="list, show and export runs")
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
    add_json_flag(p)
    p.set_defaults(func=cmd_show)
    p = rsub.add_parser("export", help="write a run's results as CSV or JSONL")
    p.add_argument("run_id", type=int)
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    p.add_argument("-o", "--output", help="file (default: standard output)")
    p.set_defaults(func=cmd_export)
