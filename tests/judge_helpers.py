"""Helpers shared by the judge tests (importable because pytest puts this folder on sys.path)."""

from __future__ import annotations

from typing import Any

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


def add_endpoint(
    library: Library, server: FakeJudgeServer, name: str = "fake", **fields: Any
) -> EndpointConfig:
    values: dict[str, Any] = {
        "name": name,
        "base_url": server.base_url,
        "model": "fake-judge",
        "retry_backoff": 0.01,
        "timeout": 2.0,
        "max_concurrency": 8,
    }
    values.update(fields)
    config = EndpointConfig(**values)
    EndpointRepository.of(library).save(config)
    return config


def qa(
    sample_id: str, question: str, completion: str, expected: str | None = None, **extra: Any
) -> Sample:
    return Sample(
        id=sample_id,
        messages=[Turn(role="user", content=question)],
        completion=completion,
        expected=expected,
        **extra,
    )
