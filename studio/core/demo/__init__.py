"""The demo library: sample graders of every kind, datasets, and the scripted judge's endpoint.

Built from ``resources/demo`` so that what a new user opens is the same content the tests check.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from studio.core.datasets import read_dataset
from studio.core.demo.labels import add_demo_labels
from studio.core.models import files as definition_files
from studio.core.models.endpoints import EndpointConfig
from studio.core.paths import demo_dir
from studio.core.store import Library, NotFound

DEMO_ENDPOINT = "demo-scripted-judge"
DEMO_JUDGE_PORT = 8765
DEMO_REWARD_PORT = 8766
#: endpoints of the scripted models under test (``generate --endpoint demo-model-a``), served by the
#: same fake-judge server as the demo's judge
DEMO_MODELS = {"demo-model-a": "scripted-model-a", "demo-model-b": "scripted-model-b"}


class DemoReport(BaseModel):
    graders_created: list[str]
    graders_kept: list[str]
    datasets: dict[str, int]
    endpoint: str | None


def build_demo(library: Library, source: Path | None = None) -> DemoReport:
    """Add the demo content; graders and datasets the library already has are left as they are."""
    source = source or demo_dir()
    created, kept = [], []
    for path in sorted((source / "graders").glob("*.grader.yaml")):
        definition = definition_files.load(path)
        try:
            library.graders.get(definition.key, include_deleted=True)
            kept.append(definition.key)
        except NotFound:
            library.graders.create(definition, message="demo library")
            created.append(definition.key)
    datasets: dict[str, int] = {}
    existing = {d.name for d in library.datasets.list(include_deleted=True)}
    for path in sorted((source / "datasets").glob("*.jsonl")):
        name = path.stem.replace("_", "-")
        if name not in existing:
            parsed = read_dataset(path)
            library.datasets.create(name, parsed.samples, format=parsed.format, source=path.name)
        datasets[name] = library.datasets.get(name).sample_count
    add_demo_labels(library, source)
    return DemoReport(graders_created=created, graders_kept=kept, datasets=datasets,
                      endpoint=_demo_endpoint(library))


def _demo_endpoint(library: Library) -> str | None:
    """Point the demo judges at the scripted fake judge (no account, no model, no key)."""
    from studio.core.store.endpoints import (
        demo_endpoint_config,
        save_endpoint_if_missing,
    )

    save_endpoint_if_missing(library, demo_endpoint_config(DEMO_ENDPOINT, DEMO_JUDGE_PORT))
    for name, model in DEMO_MODELS.items():
        save_endpoint_if_missing(library, model_endpoint_config(name, model, DEMO_JUDGE_PORT))
    return DEMO_ENDPOINT


def model_endpoint_config(name: str, model: str, port: int, host: str = "127.0.0.1") -> EndpointConfig:
    """An endpoint of the scripted model under test (``fake_model``) on the fake-judge server."""
    return EndpointConfig(name=name, kind="openai", base_url=f"http://{host}:{port}/v1", model=model,
                          timeout=10.0, max_concurrency=16, max_retries=1,
                          label="scripted model under test, not a model (grader-studio fake-judge)")
