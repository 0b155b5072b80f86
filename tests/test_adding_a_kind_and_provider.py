"""Adding a grader kind or an endpoint provider is one new file (plus its tests): tests/toy_kind.py and
tests/toy_provider.py, each registered by a distribution's entry point (as an installed package
would), and no studio file changes. Both then run end to end through the engine: the kind over a
dataset, the provider as the endpoint of a judge answering from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import qa, send_json, served, without_proxy_variables

from studio.core import kinds as kind_registry
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.judges.http import providers as provider_registry
from studio.core.models import dump_grader, parse_grader
from studio.core.models.endpoints import EndpointConfig
from studio.core.platforms.registry import platforms
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


def _forget() -> None:
    kind_registry._registry.cache_clear()
    kind_registry._named_module.cache_clear()
    provider_registry.providers.cache_clear()
    provider_registry._named.cache_clear()
    for name in ("toy_kind", "toy_provider"):
        sys.modules.pop(name, None)


@pytest.fixture
def toys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tests/toy_kind.py and tests/toy_provider.py named by a distribution's entry points (tests/ is
    on sys.path, so each module is found by its name)."""
    info = tmp_path / "site" / "toys-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toys\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[grader_studio.kinds]\nword_budget = toy_kind\n\n"
                                           "[grader_studio.providers]\ntoy_api = toy_provider\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    _forget()
    yield
    monkeypatch.undo()
    _forget()


def test_a_new_kind_from_one_file_is_listed_validated_run_and_refused_by_name(toys: None, library: Library) -> None:
    assert kind_registry.kinds()["word_budget"].label == "Word budget"
    budget = parse_grader({"kind": "word_budget", "key": "short", "max_words": 2})
    assert type(budget).__name__ == "WordBudget" and dump_grader(budget)["max_words"] == 2
    composite = parse_grader({"kind": "composite", "key": "c", "components": [{"grader": dump_grader(budget)}]})
    assert parse_grader(dump_grader(composite)) == composite

    library.graders.create(budget)
    library.datasets.create("answers", [qa("a", "Capital?", "Paris"), qa("b", "Capital?", "It is Paris, France")])
    run = run_grader(library, "short", "answers", RunOptions(concurrency=2))
    assert run.status == "completed" and run.counts == {"ok": 2}
    assert {r["sample_id"]: r["score"] for r in library.runs.results(run.id)} == {"a": 1.0, "b": 0.5}

    assert platforms()["hud"].can_export(budget).reason == "HUD has no word budget, by the toy's own word"
    assert "word budget" in platforms()["openai"].can_export(budget).reason


class _ToyServer(http.server.BaseHTTPRequestHandler):
    """The toy API: a verdict on whether the answer (the last turn) says Paris, and its usage."""

    seen: list[tuple[str, str | None]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, self.headers.get("X-Toy-Key")))
        verdict = "PASS" if "Paris" in body["turns"][-1][1].split("<response>")[-1] else "FAIL"
        reply = json.dumps({"reasoning": "read it", "verdict": verdict})
        send_json(self, json.dumps({"reply": reply, "spent": {"in": 12, "out": 3}}).encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_a_new_provider_from_one_file_is_the_endpoint_a_judge_runs_against(
        toys: None, library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    without_proxy_variables(monkeypatch)
    monkeypatch.setenv("TOY_API_KEY", "sekrit")
    assert "toy_api" in provider_registry.provider_names()
    _ToyServer.seen = []
    with served(_ToyServer) as base_url:
        config = EndpointConfig(name="toy", kind="toy_api", base_url=base_url, model="toy-1", api_key_env="TOY_API_KEY",
                                retry_backoff=0.01, timeout=5.0)
        assert config.url_for(provider_registry.provider_of(config).path) == f"{base_url}/ask"
        repo = EndpointRepository.of(library)
        repo.save(config)
        repo.approve(repo.get("toy"))
        library.graders.create(parse_grader({"kind": "binary_judge", "key": "says-paris", "endpoint": "toy",
                                             "criteria": "The response names Paris."}))
        library.datasets.create("geo", [qa("a", "Capital of France?", "Paris"),
                                        qa("b", "Capital of France?", "Lyon")])
        run = run_grader(library, "says-paris", "geo", RunOptions(concurrency=2))
    assert run.status == "completed" and run.counts == {"ok": 2}
    rows = {r["sample_id"]: r for r in library.runs.results(run.id)}
    assert {k: r["score"] for k, r in rows.items()} == {"a": 1.0, "b": 0.0}
    assert all(r["prompt_tokens"] == 12 and r["completion_tokens"] == 3 for r in rows.values())
    assert _ToyServer.seen == [("/v1/ask", "sekrit")] * 2
