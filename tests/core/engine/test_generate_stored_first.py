"""A generation stores each answer before anything else happens: a worker's next call waits for the
commit of its last answer, so a generation killed at any moment has stored every answer that arrived
(but one in the middle of its commit), and ``--resume`` never asks those again. Seen from the server:
with one call at a time, each request finds every earlier answer already in the library."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from studio.core.datasets import read_dataset
from studio.core.demo import model_endpoint_config
from studio.core.demo.fake_http import Reply
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.engine.generate import GenerationSettings, generate
from studio.core.paths import demo_dir
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


class StoredCounter(FakeJudgeServer):
    """Notes, as each request arrives, how many answers the library holds."""

    def __init__(self, db: Path) -> None:
        super().__init__(model_under_test=True)
        self.db = db
        self.stored_at_request: list[int] = []

    async def dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes | None) -> Reply:
        if method == "POST":
            with sqlite3.connect(self.db) as con:
                row = con.execute("SELECT sample_count FROM datasets WHERE name = 'qa-a'").fetchone()
            self.stored_at_request.append(row[0] if row else 0)
        return await super().dispatch(method, target, headers, raw)


def test_each_call_goes_out_after_the_previous_answer_is_stored(db_path: Path) -> None:
    server = StoredCounter(db_path).start()
    try:
        qa = read_dataset(demo_dir() / "datasets" / "qa.jsonl")
        with Library.open(db_path) as lib:
            lib.datasets.create("qa", qa.samples[:12], format=qa.format)
            EndpointRepository.of(lib).save(model_endpoint_config("model-a", "scripted-model-a", server.port)
                                            .model_copy(update={"max_concurrency": 1, "retry_backoff": 0.01}))
            result = generate(lib, "qa-a", GenerationSettings(source="qa", endpoint="model-a"))
        assert result.status == "complete" and result.stored == 12
        assert server.stored_at_request == list(range(12))  # request k found answers 0..k-1 stored
    finally:
        server.stop()
