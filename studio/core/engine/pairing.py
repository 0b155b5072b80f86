"""Pair two datasets' completions of the same samples, for a pairwise judge.

Why: the usual pairwise question is "model A or model B?", and each model's outputs arrive as a
dataset of their own (same prompts, same sample ids, different completions). The paired dataset
keeps A's samples and carries both completions in ``metadata.completion_a`` / ``completion_b``,
which is where a pairwise judge reads them by default. Samples are matched by id; a pair whose
prompts differ is left out and counted, never paired silently.
"""

from __future__ import annotations

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject
from studio.core.store.library import Library


class PairingError(StudioError):
    pass


def pair_datasets(library: Library, a: str, b: str, name: str) -> JsonObject:
    """Create dataset ``name`` from the samples ``a`` and ``b`` share; returns what was paired."""
    if a == b:
        raise PairingError("pair two different datasets: a dataset compared with itself has no second answer")
    info_a, info_b = library.datasets.get(a), library.datasets.get(b)
    second = {s.id: s for _, s in library.datasets.iter_indexed(info_b.id)}
    paired, differing, only_a = [], [], 0
    for _, sample in library.datasets.iter_indexed(info_a.id):
        other = second.pop(sample.id, None)
        if other is None:
            only_a += 1
        elif other.messages != sample.messages:
            differing.append(sample.id)
        else:
            metadata = {**sample.metadata, "completion_a": sample.completion, "completion_b": other.completion,
                        "source_a": a, "source_b": b}
            paired.append(sample.model_copy(update={"metadata": metadata}))
    if not paired:
        raise PairingError(f"{a} and {b} share no sample (same id and same prompt) to pair")
    library.datasets.create(name, paired, format="adaptive", source=f"pairs of {a} and {b}")
    return {"dataset": name, "paired": len(paired), "only_in_a": only_a, "only_in_b": len(second),
            "different_prompts": differing}
