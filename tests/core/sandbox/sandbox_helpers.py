"""Samples for the sandbox tests (a plain module: conftest names clash across test folders)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.models import Outcome, Sample, Turn
from studio.core.sandbox.scorer import FunctionScorer


def make_samples(n: int, **overrides: Any) -> list[Sample]:
    return [
        Sample(
            id=f"s{i}",
            messages=[Turn(role="user", content=f"question {i}")],
            completion=str(i),
            expected=str(i),
            metadata={"i": i, **overrides.get("metadata", {})},
            fields={"question": f"question {i}", "label": "pos" if i % 2 else "neg"},
        )
        for i in range(n)
    ]


Score = Callable[..., tuple[list[Outcome], FunctionScorer]]
