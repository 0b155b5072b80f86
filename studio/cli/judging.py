"""``grader-studio render`` (a judge's exact prompt) and ``grader-studio fake-judge`` (scripted server)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from studio.core.judges.render import render_prompt

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .parsers import Subparsers

if TYPE_CHECKING:
    from studio.core.demo.fake_http import FakeServerBase


def _dataset_name(app: CliApp, name: str | None) -> str:
    if name:
        return name
    datasets = [d.name for d in app.library.datasets.list()]
    if len(datasets) == 1:
        return datasets[0]
    if not datasets:
        raise CliError(
            "the library has no datasets; import one with `grader-studio datasets import`"
        )
    raise CliError(f"several datasets ({', '.join(datasets)}); choose one with --dataset")


def cmd_render(args: argparse.Namespace, app: CliApp) -> int:
    grader = app.library.graders.get(args.grader).definition
    dataset = _dataset_name(app, args.dataset)
    sample = app.library.datasets.sample(dataset, args.sample)
    rendered = render_prompt(grader, sample)
    if args.json:
        app.print_json(rendered.model_dump(mode="json"))
    else:
        sys.stdout.write(rendered.text())
    return 0


def cmd_fake_judge(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.demo.fake_local import LocalServerHabits
    from studio.core.demo.fake_server import FakeJudgeServer, FakeRewardServer

    habits = (
        LocalServerHabits(
            logprobs=not args.no_logprobs,
            structured="json_object_schema",
            slots=1,
            unbounded_seconds=60.0,
            nests_json=True,
        )
        if args.as_llama_cpp
        else None
    )
    judge = FakeJudgeServer(
        args.host,
        args.port,
        latency_ms=args.latency_ms,
        logprobs=not args.no_logprobs,
        habits=habits,
        bias=args.bias,
        model_under_test=args.model_under_test,
    )
    reward_port = (
        args.reward_port if args.reward_port is not None else (args.port + 1 if args.port else 0)
    )
    reward = (
        None
        if args.no_reward
        else FakeRewardServer(args.host, reward_port, latency_ms=args.latency_ms)
    )
    _listen(judge, args.host, args.port, "--port")
    if args.model_under_test:
        print(f"fake-judge as a model under test (a script: canned answers, not a model) at {judge.base_url}",
              flush=True)
    else:
        print(f"fake-judge (a scripted judge, not a model) at {judge.base_url}", flush=True)
    if reward is not None:
        try:
            _listen(reward, args.host, reward_port, "--reward-port")
        except CliError:
            judge.stop()
            raise
        print(f"reward server (scripted) at {reward.url}", flush=True)
    try:
        judge.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        judge.stop()
        if reward is not None:
            reward.stop()
    return 0


def _listen(server: FakeServerBase, host: str, port: int, option: str) -> None:
    """Start ``server``; a port that cannot be had is one sentence naming it and the way out."""
    import errno

    try:
        server.start()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            why = "is already in use (another fake-judge or server is listening there)"
        elif exc.errno == errno.EACCES:
            why = "may not be used by this user"
        else:
            why = f"cannot be listened on ({exc.strerror or exc})"
        raise CliError(f"port {port} on {host} {why}; choose another with {option} N, or {option} 0 "
                       "for any free port") from None


FAKE_JUDGE_EPILOG = """steer it from a sample's text with markers:
  [[judge:PASS]] [[judge:FAIL]] [[judge:NA]] [[judge:MET]] [[judge:UNMET]]
  [[judge:score=4]] [[judge:probs=0.05,0.05,0.1,0.3,0.5]]
  [[fault:429x2@1]] [[fault:500]] [[fault:slow@3]] [[fault:malformed]] [[fault:drop]]
point an endpoint at it:
  grader-studio endpoints add local --base-url http://127.0.0.1:8765/v1 --model fake-judge"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("render", help=COMMAND_HELP["render"])
    p.add_argument("grader", help="grader key")
    p.add_argument("--sample", type=int, required=True, metavar="N", help="sample index (0-based)")
    p.add_argument("--dataset", help="dataset name (default: the library's only dataset)")
    add_json_flag(p)
    p.set_defaults(func=cmd_render)

    p = sub.add_parser(
        "fake-judge",
        help=COMMAND_HELP["fake-judge"],
        description="A scripted judge, not a model: it answers Grader Studio's built-in judge "
        "prompts by simple rules (a response containing the reference answer passes).",
        epilog=FAKE_JUDGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument(
        "--port", type=int, default=8765, help="0 picks a free port (default 8765, the demo's)"
    )
    p.add_argument(
        "--latency-ms", type=float, default=0.0, help="fixed delay added to every answer"
    )
    p.add_argument(
        "--no-logprobs", action="store_true", help="behave like a server without logprobs"
    )
    p.add_argument(
        "--as-llama-cpp",
        action="store_true",
        help="act like llama-cpp-python: one request at a time, 500 + validation body for fields it "
        "refuses (and for logprobs with --no-logprobs), a minute per request without max_tokens, "
        "nested JSON unless the schema is pinned",
    )
    p.add_argument(
        "--bias",
        choices=("first", "length", "no-reference"),
        help="a judge biased on purpose, to try the bias probes: first (always prefers the first "
        "answer), length (passes long answers), no-reference (ignores the reference answer)",
    )
    p.add_argument(
        "--model-under-test",
        action="store_true",
        help="answer every chat request as the scripted model under test (canned answers to the demo's "
        "questions, right on most, wrong or verbose on some) for `grader-studio generate`; without it, "
        "requests for the models scripted-model-a / scripted-model-b get those answers",
    )
    p.add_argument("--reward-port", type=int, help="reward server port (default: --port + 1)")
    p.add_argument("--no-reward", action="store_true", help="do not serve the reward server")
    p.set_defaults(func=cmd_fake_judge)
