"""``grader-studio generate DATASET --endpoint NAME --name NEW``: the outputs under test, from a model.

Each sample's input turns go to the endpoint; its answers become dataset NEW, with provenance
(engine/generate.py). ``run ... --generate-with ENDPOINT`` generates then grades (``generate_for_run``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .app import CliApp, CliError, add_json_flag, library_refusal

if TYPE_CHECKING:
    from studio.core.engine.generate import GenerationProgress, GenerationResult, GenerationSettings


class ProgressLine:
    """One line on stderr, rewritten at most five times a second (a terminal only)."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.live = stream.isatty()
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
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read the system prompt file {str(path)!r} ({exc.__class__.__name__})", code=2) from None


def settings_from(args: argparse.Namespace, source: str | None, endpoint: str | None) -> GenerationSettings | None:
    """The settings given on the command line (only those given, for a resume to check)."""
    from pydantic import ValidationError

    from studio.core.engine.generate import GenerationSettings

    given: dict[str, Any] = {}
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
        first = exc.errors()[0]
        raise CliError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}", code=2) from None
    if args.resume:  # an empty source or endpoint was not given: not a difference to refuse
        settings.model_fields_set.difference_update({f for f in ("source", "endpoint") if not given[f]})
    return settings


def _max_cost(text: str | None) -> Decimal | None:
    from studio.core.engine.budget import BudgetError, parse_money

    try:
        return None if text is None else parse_money(text, "--max-cost")
    except BudgetError as exc:
        raise CliError(str(exc), code=2) from None


def run_generation(app: CliApp, name: str, settings: GenerationSettings | None, *, resume: bool,
                   concurrency: int | None, max_cost: Decimal | None, quiet: bool) -> GenerationResult:
    """Generate with Ctrl+C as a cancel (a second one aborts at once); what arrived is kept."""
    from studio.core.engine.budget import BudgetError
    from studio.core.engine.generate import GenerateError, generate
    from studio.core.store import LibraryError

    cancel = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
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
    try:
        return generate(app.library, name, settings, resume=resume, concurrency=concurrency, max_cost=max_cost,
                        cancel=cancel, on_progress=line)
    except (GenerateError, BudgetError, LibraryError) as exc:
        raise CliError(str(exc), code=2) from None
    finally:
        line.done()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def result_json(result: GenerationResult) -> dict[str, Any]:
    from studio.core.engine.usage import exact_decimal

    return {"dataset": result.dataset, "status": result.status, "planned": result.planned,
            "stored": result.stored, "generated": result.generated, "reason": result.reason,
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
        text += f"\n{result.reason}"
    if result.errors:
        text += "\nfailed calls, e.g.: " + "; ".join(result.errors[:3])
    return text


def exit_code(result: GenerationResult) -> int:
    return {"complete": 0, "cancelled": 130}.get(result.status, 1)


@library_refusal
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
    from studio.core.engine.generate import GenerateError, estimate
    from studio.core.engine.usage import exact_decimal, format_usd

    try:
        found = estimate(app.library, settings, name=args.name, resume=args.resume)  # type: ignore[arg-type]
    except GenerateError as exc:
        raise CliError(str(exc), code=2) from None
    costs = found.cost_range()
    if args.json:
        app.print_json({"calls": found.calls, "already_stored": found.already_stored,
                        "prompt_tokens": found.prompt_tokens, "max_completion_tokens": found.max_completion_tokens,
                        "token_count": found.token_method, "endpoint": found.config.name,
                        "cost_usd": None if costs is None else {"low": exact_decimal(costs[0]),
                                                                 "high": exact_decimal(costs[1])}})
        return 0
    print(f"dry run (no call made): {found.calls} calls to {found.config.name}"
          + (f" ({found.already_stored} answers already stored)" if found.already_stored else ""))
    print(f"prompt tokens: {found.prompt_tokens:,} ({found.token_method}); "
          f"completion tokens: at most {found.max_completion_tokens:,}")
    print("cost: " + ("unknown (the endpoint has no prices)" if costs is None
                      else f"{format_usd(costs[0])} to {format_usd(costs[1])}"))
    return 0


def add_generation_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="M", help="model (default: the endpoint's)")
    p.add_argument("--system", metavar="TEXT|@FILE", help="system prompt sent instead of the samples' own")
    p.add_argument("--temperature", type=float, metavar="T")
    p.add_argument("--max-tokens", type=int, metavar="N", help="bound on each answer's length (tokens)")
    p.add_argument("--samples", type=int, metavar="K", help="answers stored for each sample (default 1)")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "generate", help="call a model on a dataset's inputs and store its answers as a new dataset",
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
    p.set_defaults(func=cmd_generate)
