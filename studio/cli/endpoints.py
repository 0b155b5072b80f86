"""``grader-studio endpoints ...``: the judge endpoints of the library (keys live in the keyring)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from collections.abc import Iterator

from pydantic import ValidationError

from studio.core.engine.budget import BudgetError, parse_money
from studio.core.judges.http.credentials import (
    get_keyring_key,
    set_keyring_key,
)
from studio.core.judges.http.probe import apply_probe, probe_endpoint
from studio.core.judges.http.providers import provider_of
from studio.core.judges.http.proxies import describe_route
from studio.core.judges.http.tls import TrustStoreError, ssl_context
from studio.core.models.broken import BrokenRow
from studio.core.models.endpoints import EndpointConfig
from studio.core.store.endpoint_trust import key_variable_problem, pending, plain, shown_url

from .app import COMMAND_HELP, CliApp, CliError, add_json_flag
from .broken import broken_json, say_broken
from .parsers import Subparsers


class _ProviderNames:
    """``--kind``'s choices, read from the provider registry only when the option is checked or
    shown (building the parser imports no provider)."""

    def __contains__(self, name: object) -> bool:
        from studio.core.judges.http.providers import provider_names

        return name in provider_names()

    def __iter__(self) -> Iterator[str]:
        from studio.core.judges.http.providers import provider_names

        return iter(provider_names())


def key_source(config: EndpointConfig) -> str:
    """Where the key would come from, without revealing it."""
    if get_keyring_key(config.name):
        return "keyring"
    if config.api_key_env:
        state = "set" if os.environ.get(config.api_key_env) else "unset"
        return f"env {config.api_key_env} ({state})"
    return "none"


def cmd_add(args: argparse.Namespace, app: CliApp) -> int:
    repo = app.library.endpoints
    if not args.replace and args.name in repo.names():
        raise CliError(f"an endpoint named {args.name!r} exists; use --replace to overwrite it")
    fields: dict[str, object] = {
        "name": args.name,
        "kind": args.kind,
        "base_url": args.base_url,
        "model": args.model,
        "api_key_env": args.api_key_env,
    }
    for option in (
        "timeout",
        "max_concurrency",
        "requests_per_minute",
        "temperature",
        "max_tokens",
        "label",
        "api_version",
        "proxy",
    ):
        value = getattr(args, option)
        if value is not None:
            fields[option] = value
    for option, flag in (("price_input", "--price-input"), ("price_output", "--price-output"),
                         ("price_cached_input", "--price-cached-input")):
        text = getattr(args, option)
        if text is not None:
            try:
                fields[option] = parse_money(text, flag)
            except BudgetError as exc:
                raise CliError(f"{exc} (USD per million tokens)", code=2) from None
    if args.ca_bundle is not None:
        bundle = os.path.abspath(os.path.expanduser(args.ca_bundle))
        if not os.path.isfile(bundle):
            raise CliError(f"--ca-bundle: {args.ca_bundle!r} is not a file (a PEM file of CA certificates)",
                           code=2)
        try:
            ssl_context(bundle)
        except TrustStoreError as exc:
            raise CliError(f"--ca-bundle: {exc}", code=2) from None
        fields["ca_bundle"] = bundle
    try:
        config = EndpointConfig(**fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise CliError(f"invalid endpoint: {problems}") from None
    if config.api_key_env and (problem := key_variable_problem(config.api_key_env)):
        raise CliError(f"--api-key-env: {problem}", code=2)
    if args.api_key_stdin:
        # a terminal gets a prompt that does not echo; a pipe is read as is
        key = getpass.getpass("API key: ") if sys.stdin.isatty() else sys.stdin.readline().strip()
        if not key:
            raise CliError("--api-key-stdin: no key on standard input")
        set_keyring_key(config.name, key)
    repo.save(config)
    repo.approve(config)  # the user's own settings: their key may go there
    prices = ("" if config.price_input is None and config.price_output is None else
              f", USD per 1M tokens: {config.price_input} in, {config.price_output} out"
              + ("" if config.price_cached_input is None else f", {config.price_cached_input} cached in"))
    model = provider_of(config).model_word
    print(
        f"endpoint {config.name}: {config.kind} {config.base_url} {model} {config.model} (key: {key_source(config)}){prices}"
    )
    print(f"route: {describe_route(config.url_for('chat/completions'), config.proxy)}"
          + (f"; also trusting the CAs in {config.ca_bundle}" if config.ca_bundle else ""))
    _say_if_unreachable(config)
    return 0


#: how long ``endpoints add`` waits to see whether anything listens at the new address
ADD_CHECK_SECONDS = 2.0


def _say_if_unreachable(config: EndpointConfig) -> None:
    """An endpoint is added whether or not its server is up (it may be started later), but a user
    who mistyped the URL should hear it now, not at the first run."""
    from studio.core.engine.preflight import unreachable

    down = unreachable(config, ADD_CHECK_SECONDS)
    if down is not None:
        shown, reason = down
        print(f"note: {config.name} was added, but {shown} could not be reached ({reason}); once the "
              f"server is up, check it with `grader-studio endpoints test {config.name}`", file=sys.stderr)


def approval(config: EndpointConfig) -> str:
    """Whether this user's key may go to ``config`` (``endpoints trust`` approves it)."""
    held = pending(config)
    if held is None:
        return "approved"
    return "not approved" if held.changes is None else "changed since approved"


def cmd_list(args: argparse.Namespace, app: CliApp) -> int:
    entries = app.library.endpoints.listing()
    configs = [e for e in entries if isinstance(e, EndpointConfig)]
    broken = [e for e in entries if isinstance(e, BrokenRow)]
    if args.json:
        app.print_json([{**c.model_dump(mode="json"), "api_key": key_source(c), "approval": approval(c)}
                        for c in configs] + [broken_json(b) for b in broken])
        return 0
    if not entries:
        print(
            "no endpoints; add one with `grader-studio endpoints add NAME --base-url URL --model MODEL`"
        )
        return 0
    logprobs = {True: "yes", False: "no", None: "?"}
    rows = [
        [
            c.name,
            c.kind,
            c.base_url,
            c.model,
            c.max_concurrency,
            logprobs[c.supports_logprobs],
            key_source(c),
            approval(c),
            c.label,
        ]
        for c in configs
    ] + [[b.ident, "BROKEN", "", "", "", "", "", "", b.reason] for b in broken]
    app.print_table(
        rows, ["name", "kind", "base url", "model", "concurrency", "logprobs", "key", "approval", "label"]
    )
    say_broken(broken)
    return 0


def cmd_trust(args: argparse.Namespace, app: CliApp) -> int:
    """Show what changed in a (shared) endpoint since this user approved it, and approve it."""
    repo = app.library.endpoints
    config = repo.get(args.name)
    held = pending(config)
    if held is None:
        print(f"endpoint {config.name}: approved; your key may be sent to {plain(shown_url(config.base_url))}")
        return 0
    head = ("was never approved here; it" if held.changes is None else "changed since you approved it:")
    print(f"endpoint {config.name} {head} was last written {held.who()}")
    for line in held.lines():
        print(f"  {line}")
    if config.api_key_env and (problem := key_variable_problem(config.api_key_env)):
        print(f"note: {problem}", file=sys.stderr)
    if not args.yes:
        if not sys.stdin.isatty():
            raise CliError(f"approve with `grader-studio endpoints trust {config.name} --yes` "
                           "(standard input is not a terminal to ask on)", code=2)
        answer = input(f"Send your key for {config.name} there? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not approved; nothing changed")
            return 1
    repo.approve(config)
    print(f"approved: your key for {config.name} may be sent as above")
    return 0


def cmd_remove(args: argparse.Namespace, app: CliApp) -> int:
    app.library.endpoints.remove(args.name)
    print(f"removed endpoint {args.name}")
    return 0


def cmd_test(args: argparse.Namespace, app: CliApp) -> int:
    repo = app.library.endpoints
    config = repo.get(args.name)
    result = asyncio.run(probe_endpoint(config))
    updated, changes = apply_probe(config, result)
    repo.save(updated)
    if args.json:
        app.print_json({**result.model_dump(), "changes": changes})
    else:
        print(f"{config.name}: route: {result.route}")
        support = "supported" if result.logprobs else "not supported"
        print(f"{config.name}: answered in {result.latency_ms:.0f} ms; logprobs {support}")
        print(f"structured output: {result.structured_output}")
        if result.slots is not None:
            print(f"server: {result.server or 'unknown'}, {result.slots} request(s) at a time")
        for line in [*result.notes, *changes]:
            print(f"note: {line}")
        print(f"reply: {result.reply!r}")
    return 0


def register(sub: Subparsers) -> None:
    group = sub.add_parser("endpoints", help=COMMAND_HELP["endpoints"])
    commands = group.add_subparsers(dest="endpoints_command", metavar="ACTION", required=True)

    p = commands.add_parser("add", help="add (or with --replace, change) an endpoint")
    p.add_argument("name")
    p.add_argument(
        "--base-url", required=True, help="e.g. http://127.0.0.1:8080/v1 (llama.cpp, vLLM, Ollama)"
    )
    p.add_argument("--model", required=True)
    p.add_argument("--kind", choices=_ProviderNames(), default="openai",
                   help="openai: any OpenAI-compatible server (vLLM, Ollama, LiteLLM, OpenRouter); "
                        "azure: Azure OpenAI (--model is the deployment, --api-version required)")
    p.add_argument("--api-version", help="Azure OpenAI's api-version, e.g. 2024-10-21 (kind azure)")
    p.add_argument("--proxy", metavar="URL",
                   help="this endpoint's HTTP proxy, e.g. http://proxy.corp:3128 (wins over "
                        "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY; no credentials: keep those in the environment)")
    p.add_argument("--ca-bundle", metavar="FILE",
                   help="a PEM file of extra CAs to trust for this endpoint (a company root CA)")
    p.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    p.add_argument(
        "--api-key-stdin", action="store_true", help="read the key from stdin into the OS keyring"
    )
    p.add_argument("--timeout", type=float, help="seconds per request (default 60)")
    p.add_argument("--max-concurrency", type=int, help="calls in flight (default 8)")
    p.add_argument("--requests-per-minute", "--rpm", dest="requests_per_minute", type=float)
    p.add_argument("--temperature", type=float)
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--label", help="a note shown next to the name")
    p.add_argument("--price-input", metavar="USD_PER_1M",
                   help="price of a million prompt tokens in US dollars (the run's cost is shown with prices)")
    p.add_argument("--price-output", metavar="USD_PER_1M", help="price of a million completion tokens in US dollars")
    p.add_argument("--price-cached-input", metavar="USD_PER_1M",
                   help="price of a million prompt tokens served from the endpoint's prompt cache (default: the input price)")
    p.add_argument("--replace", action="store_true", help="overwrite an endpoint of the same name")
    p.set_defaults(func=cmd_add)

    p = commands.add_parser("list", help="list endpoints")
    add_json_flag(p)
    p.set_defaults(func=cmd_list)

    p = commands.add_parser("trust", help="approve sending your key to an endpoint a teammate set or changed")
    p.add_argument("name")
    p.add_argument("--yes", action="store_true", help="approve without asking")
    p.set_defaults(func=cmd_trust)

    p = commands.add_parser("remove", help="remove an endpoint (and its keyring entry)")
    p.add_argument("name")
    p.set_defaults(func=cmd_remove)

    p = commands.add_parser("test", help="send one tiny request; print latency and logprob support")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=cmd_test)
