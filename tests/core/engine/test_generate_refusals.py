"""A generation refuses what needs no library before it reads the library."""

from __future__ import annotations

import pytest

from studio.core.engine.generate import GenerateError, GenerationSettings, generate
from studio.core.store import Library


def test_a_concurrency_under_one_is_refused_before_the_library_is_read(library: Library) -> None:
    """Neither the dataset to resume nor the endpoint exists: the concurrency, which needs no
    library, is said first (before, the library's answer came first and the bad option only on the
    next try)."""
    with pytest.raises(GenerateError, match="--concurrency must be 1 or more"):
        generate(library, "nowhere", None, resume=True, concurrency=0)
    with pytest.raises(GenerateError, match="--concurrency must be 1 or more"):
        generate(library, "out", GenerationSettings(source="none", endpoint="nowhere"), concurrency=0)
    with pytest.raises(GenerateError, match="no endpoint named 'nowhere'"):  # the library's turn after
        generate(library, "out", GenerationSettings(source="none", endpoint="nowhere"), concurrency=1)
    assert library.datasets.list() == []
