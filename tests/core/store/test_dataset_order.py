"""A generated dataset is renumbered in its source's order: the order keys are compared as numbers on
both backends (PostgreSQL's json_extract gives text, where "10" sorts before "9")."""

from __future__ import annotations

from studio.core.models import Sample, Turn
from studio.core.store import Library


def test_reorder_compares_its_keys_as_numbers(library: Library) -> None:
    arrival = [10, 9, 2, 11, 1, 0]  # answers arrive out of order
    dataset = library.datasets.create("generated", [
        Sample(id=f"s{n}", messages=[Turn(role="user", content=f"q{n}")], completion="a",
               metadata={"generation": {"source_index": n, "repeat": 0}})
        for n in arrival])
    library.datasets.reorder(dataset.id, ("$.metadata.generation.source_index", "$.metadata.generation.repeat"))
    ids = [s.id for s in library.datasets.samples("generated")]
    assert ids == ["s0", "s1", "s2", "s9", "s10", "s11"]
