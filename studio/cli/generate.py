"""``grader-studio generate DATASET --endpoint NAME --name NEW``: the outputs under test, from a model.

Each sample's input turns go to the endpoint; its answers become dataset NEW, with provenance
(engine/generate.py). ``run ... --generate-with ENDPOINT`` generates, then grades (``generate_first``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from studio.core.safe_files import read_regular_text

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag

if TYPE_CHECKING:
    from studio.core.engine.generate import GenerationProgress, GenerationResult, GenerationSettings
    from studio.core.engine.request import RunRequest
    from studio.core.json_types import JsonObject
    from studio.core.models.thread import Sample
    from studio.core.platforms._eval import GeneratedBy

    from .parsers import Subparsers


class ProgressLine:
    """One line on stderr, rewritten at most five times a second (a terminal only)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        # stderr as it is when the line is made (not when this module was imported: an in-process
        # call may have replaced it since)
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty()
        self._last = 0.0

    def __call__(self, progress: GenerationProgress) -> None:
        now = time.monotonic()
        if not self.live or (now - self._last < 0.2 and progress.stored < progress.planned):
            return
        self._last = now
        from studio.core.engine.usage import format_usd

        cost = "" if progress.cost is None else f" · {format_usd(progress.cost)}"
        errors = f" · {progress.errors} failed" if progress.errors else ""
        self.stream.write(f"\rgenerated {progress.stored}/{progress.planned}{errors} · {progress.rate:.1f}/s"
                          f" · {progress.tally.tokens:,} tokens{cost} · {progress.in_flight} in flight   ")
        self.stream.flush()

    def done(self) -> None:
        if self.live:
            self.stream.write("\n")


def _system_text(value: str | None) -> str | None:
    """``--system TEXT`` or ``--system @FILE``."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return read_regular_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read the system prompt file {str(path)!r} ({exc.__class__.__name__})", code=2) from None


def settings_from(args: argparse.Namespace, source: str | None, endpoint: str | None) -> GenerationSettings | None:
    """The settings given on the command line (only those given, for a resume to check)."""
    from pydantic import ValidationError

    from studio.core.engine.generate import GenerationSettings

    given: dict[str, object] = {}
    for field, value in (("source", source), ("endpoint", endpoint), ("model", args.model),
                         ("system", _system_text(args.system)), ("temperature", args.temperature),
                         ("max_tokens", args.max_tokens), ("samples", args.samples), ("limit", args.limit)):
        if value is not None:
            given[field] = value
    if "source" not in given or "endpoint" not in given:
        if args.resume:
            given.setdefault("source", "")
            given.setdefault("endpoint", "")
        else:
            raise CliError("generate needs DATASET and --endpoint NAME", code=2)
    try:
        settings = GenerationSettings(**given)
    except ValidationError as exc:
        from studio.core.engine.request import option_problem  # the run request's own wording

        raise CliError(option_problem(exc), code=2) from None
    if args.resume:  # an empty source or endpoint was not given: not a difference to refuse
        settings.model_fields_set.difference_update({f for f in ("source", "endpoint") if not given[f]})
    return settings


def _max_cost(text: str | None) -> Decimal | None:
    from studio.core.engine.budget import parse_money

    return None if text is None else parse_money(text, "--max-cost")


def run_generation(app: CliApp, name: str, settings: GenerationSettings | None, *, resume: bool,
                   concurrency: int | None, max_cost: Decimal | None, quiet: bool,
                   max_spend_tokens: int | None = None) -> GenerationResult:
    """Generate with Ctrl+C as a cancel (a second one aborts at once); what arrived is kept."""
    from studio.core.engine.generate import generate

    cancel = threading.Event()

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print(f"\ncancelling the generation of {name} (Ctrl-C again to stop at once); answers so far are kept",
              file=sys.stderr)

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if main else None
    line = ProgressLine()
    if quiet:
        line.live = False
    try:  # a refusal (GenerateError, BudgetError, the library's) is main's to print, exit 2 (refusal_code)
        return generate(app.library, name, settings, resume=resume, concurrency=concurrency, max_cost=max_cost,
                        max_spend_tokens=max_spend_tokens, cancel=cancel, on_progress=line)
    finally:
        line.done()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def reason(result: GenerationResult) -> str:
    """The engine's reason, with this face's way to resume an unfinished generation (the window
    offers its own Resume button instead)."""
    if result.status == "complete" or not result.reason or "resume" in result.reason:  # a budget's says how
        return result.reason
    import shlex

    return f"{result.reason}; resume with `grader-studio generate --name {shlex.quote(result.dataset)} --resume`"


def result_json(result: GenerationResult) -> JsonObject:
    from studio.core.engine.usage import exact_decimal

    return {"dataset": result.dataset, "status": result.status, "planned": result.planned,
            "stored": result.stored, "generated": result.generated, "reason": reason(result),
            "calls": result.tally.calls, "prompt_tokens": result.tally.prompt_tokens,
            "completion_tokens": result.tally.completion_tokens,
            "cost_usd": None if result.cost is None else exact_decimal(result.cost),
            "errors": result.errors, "provenance": result.provenance}


def result_line(result: GenerationResult) -> str:
    from studio.core.engine.usage import format_usd

    p = result.provenance
    cost = "" if result.cost is None else f", {format_usd(result.cost)}"
    text = (f"generation {result.status}: {result.stored}/{result.planned} answers in {result.dataset!r} "
            f"(from {p.get('source_dataset')} by {p.get('endpoint')}, model {p.get('model')}); "
            f"{result.tally.calls} calls, {result.tally.tokens:,} tokens{cost}")
    if result.reason:
        text += f"\n{reason(result)}"
    if result.errors:
        text += "\nfailed calls, e.g.: " + "; ".join(result.errors[:3])
    return text


def exit_code(result: GenerationResult) -> int:
    return {"complete": 0, "cancelled": 130}.get(result.status, 1)


def cmd_generate(args: argparse.Namespace, app: CliApp) -> int:
    settings = settings_from(args, args.dataset, args.endpoint)
    if args.dry_run:
        return _dry_run(args, app, settings)
    result = run_generation(app, args.name, settings, resume=args.resume, concurrency=args.concurrency,
                            max_cost=_max_cost(args.max_cost), quiet=args.quiet or args.json)
    if args.json:
        app.print_json(result_json(result))
    else:
        print(result_line(result))
    return exit_code(result)


def _dry_run(args: argparse.Namespace, app: CliApp, settings: GenerationSettings | None) -> int:
    from studio.core.engine.generate import estimate
    from studio.core.engine.usage import exact_decimal, format_usd
    from studio.core.judges.http.adapters import NO_USAGE_NOTE, reports_usage

    found = estimate(app.library, settings, name=args.name, resume=args.resume)  # type: ignore[arg-type]
    costs = found.cost_range()
    if args.json:
        app.print_json({"calls": found.calls, "already_stored": found.already_stored,
                        "prompt_tokens": found.prompt_tokens, "max_completion_tokens": found.max_completion_tokens,
                        "token_count": found.token_method, "endpoint": found.config.name,
                        "reports_usage": reports_usage(found.config),
                        "cost_usd": None if costs is None else {"low": exact_decimal(costs[0]),
                                                                 "high": exact_decimal(costs[1])}})
        return 0
    print(f"dry run (no call made): {found.calls} calls to {found.config.name}"
          + (f" ({found.already_stored} answers already stored)" if found.already_stored else ""))
    print(f"prompt tokens: {found.prompt_tokens:,} ({found.token_method}); "
          f"completion tokens: at most {found.max_completion_tokens:,}")
    print("cost: " + ("unknown (the endpoint has no prices)" if costs is None
                      else f"{format_usd(costs[0])} to {format_usd(costs[1])}"))
    if not reports_usage(found.config):
        print(f"endpoint {found.config.name} {NO_USAGE_NOTE}")
    return 0


def generation_asked(args: argparse.Namespace, request: RunRequest) -> None:
    """``run ... --generate-with ENDPOINT`` asks for a new run over DATASET's inputs: refused (exit 2)
    with --resume, --dry-run or --repeat, or without DATASET, before anything is read or sent."""
    if request.resume is not None or args.dry_run or args.repeat is not None:
        raise CliError("--generate-with starts a new run: not with --resume, --dry-run or --repeat", code=2)
    if not request.dataset:
        raise CliError("run --generate-with ENDPOINT needs DATASET (the inputs to send)", code=2)


@dataclass
class Generation:
    """``run GRADER|SUITE DATASET --generate-with ENDPOINT``'s first step: DATASET's outputs generated
    with the endpoint (into ``--generate-name``, default DATASET-ENDPOINT; an unfinished one is
    resumed, a finished one reused), and the run ``request`` that grades them. One budget covers
    both (``--max-cost``/``--max-tokens``: the run gets what the generation left), and the
    generation's cost is shown apart from the judging's (``show``; the run's reports say it too:
    ``Reports.generated``)."""

    request: RunRequest
    result: GenerationResult
    endpoint: str

    def show(self, app: CliApp, report: JsonObject | None, judging: Fraction | None) -> None:
        """What the generation cost beside what the run's judges did (``judging``): with ``run
        --json``, the run's ``report`` with a ``generation`` block and ``cost_usd`` (generation,
        judging, total); else ``cost: generation $X (N calls to ENDPOINT) + judging $Y = $Z``."""
        from studio.core.engine.usage import exact_decimal, format_usd

        cost = self.result.cost
        total = None if cost is None or judging is None else cost + judging
        if report is None:
            print(f"cost: generation {format_usd(cost)} ({self.result.tally.calls} calls to {self.endpoint})"
                  f" + judging {format_usd(judging)}" + ("" if total is None else f" = {format_usd(total)}"))
            return
        generation = result_json(self.result)
        app.print_json({**report, "generation": generation,
                        "cost_usd": {"generation": generation["cost_usd"],
                                     "judging": None if judging is None else exact_decimal(judging),
                                     "total": None if total is None else exact_decimal(total)}})


def generate_first(args: argparse.Namespace, app: CliApp, request: RunRequest) -> Generation:
    """Generate the outputs ``request`` grades (``generation_asked`` said it may); ``args`` only
    names the generation's endpoint, name and model, and how to print. An unfinished generation,
    or one that spent the whole budget, is not graded (exit 1)."""
    from studio.core.engine.generate import GenerationSettings, output_name
    from studio.core.engine.reports import Generated
    from studio.core.engine.usage import exact_decimal

    endpoint = str(args.generate_with)
    source = str(request.dataset)
    name = args.generate_name or output_name(source, endpoint)
    # --limit N grades the first N samples: only those are generated
    settings = GenerationSettings(source=source, endpoint=endpoint, model=args.generate_model, limit=request.limit)
    resume = name in {d.name for d in app.library.datasets.list()}
    result = run_generation(app, name, settings, resume=resume, concurrency=request.concurrency,
                            max_cost=request.max_cost, max_spend_tokens=request.max_tokens,
                            quiet=args.json or args.progress_jsonl)
    print(result_line(result), file=sys.stderr)
    if result.status != "complete":
        raise CliError(f"not graded: the generation of {name!r} is {result.status} ({result.reason or 'see above'})")
    left: dict[str, object] = {"dataset": name}  # the run grades the generated outputs, with what is left to spend
    if request.max_cost is not None:
        money = request.max_cost - Decimal(exact_decimal(result.cost or Fraction(0)))
        if money <= 0:
            raise CliError(f"not graded: the generation spent the whole --max-cost (${request.max_cost})")
        left["max_cost"] = money
    if request.max_tokens is not None:
        if result.tally.tokens >= request.max_tokens:
            raise CliError(f"not graded: the generation spent the whole --max-tokens ({request.max_tokens:,})")
        left["max_tokens"] = request.max_tokens - result.tally.tokens
    # the run's reports say where its outputs came from and what making them cost (engine/reports: markdown.generation_section, junit.generation_properties)
    p = result.provenance
    generated = Generated(dataset=result.dataset, stored=result.stored, endpoint=p.get("endpoint"),
                          model=p.get("model"), source_dataset=p.get("source_dataset"), calls=result.tally.calls,
                          tokens=result.tally.tokens, cost=None if result.cost is None else exact_decimal(result.cost))
    graded = request.model_copy(update={**left, "reports": request.reports.model_copy(update={"generated": generated})})
    return Generation(request=graded, result=result, endpoint=endpoint)


def generated_by(app: CliApp, dataset: str, samples: Sequence[Sample]) -> GeneratedBy | None:
    """For an export of a generated dataset: its model under test (the endpoint, its model and
    parameters, and each sample's chat exactly as ``generate`` sent it); None for an imported one."""
    from studio.core.engine.generate import (
        GenerateError,
        endpoint_config,
        request_for,
        resumed_settings,
    )
    from studio.core.platforms._eval import GeneratedBy

    record = app.library.datasets.get(dataset)
    if (record.provenance or {}).get("kind") != "generated":
        return None
    try:
        settings = resumed_settings(app.library, dataset, None)
        config = endpoint_config(app.library, settings.endpoint)
    except GenerateError as exc:
        raise CliError(f"cannot export {dataset!r} as generated: {exc}") from None
    chats = []
    for sample in samples:
        repeat = int((sample.metadata.get("generation") or {}).get("repeat") or 0)
        request = request_for(sample, settings, repeat)
        chats.append([m.model_dump() for m in request.messages])
    return GeneratedBy(endpoint=config.name, kind=config.kind, base_url=config.base_url,
                       model=settings.model or config.model, messages=chats, temperature=settings.temperature,
                       max_tokens=settings.max_tokens, api_key_env=config.api_key_env)


def add_generation_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="M", help="model (default: the endpoint's)")
    p.add_argument("--system", metavar="TEXT|@FILE", help="system prompt sent instead of the samples' own")
    p.add_argument("--temperature", type=float, metavar="T")
    p.add_argument("--max-tokens", type=int, metavar="N", help="bound on each answer's length (tokens)")
    p.add_argument("--samples", type=int, metavar="K", help="answers stored for each sample (default 1)")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "generate", help=COMMAND_HELP["generate"],
        description="Send each sample's input turns (everything before the completion) to an endpoint and "
        "store the answers as dataset NEW, with provenance (source, endpoint, model, parameters, time, "
        "tokens, cost). Ctrl+C keeps what was generated; --resume continues without repeating a call.")
    p.add_argument("dataset", nargs="?", help="source dataset (its inputs are sent)")
    p.add_argument("--endpoint", help="the endpoint of the model under test")
    p.add_argument("--name", required=True, metavar="NEW", help="name of the dataset to create")
    add_generation_flags(p)
    p.add_argument("--limit", type=int, metavar="N", help="only the first N samples")
    p.add_argument("--concurrency", type=int, metavar="N", help="calls in flight (within the endpoint's limit)")
    p.add_argument("--dry-run", action="store_true", help="count the calls, tokens and cost range; call nothing")
    p.add_argument("--max-cost", metavar="USD", help="stop starting calls once this much is spent")
    p.add_argument("--resume", action="store_true", help="continue an unfinished generation of NEW")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_json_flag(p)
    p.set_defaults(func=cmd_generate, refusal_code=2)  # a generation refused exits 2
