"""The demo library's human labels: ``resources/demo/labels/<dataset>.<key>.jsonl``.

They agree with the scripted demo judge on most samples and disagree on a few (a short answer the
judge's rule calls wrong, a hedge it lets pass), so the agreement view has something to show.
"""

from __future__ import annotations

from pathlib import Path

from studio.core.datasets.label_files import read_labels
from studio.core.store import Library, NotFound


def add_demo_labels(library: Library, source: Path) -> dict[str, int]:
    """Label sets of the demo datasets, added once (a set that already has labels is left alone)."""
    added: dict[str, int] = {}
    for path in sorted((source / "labels").glob("*.jsonl")):
        dataset_stem, _, key = path.name.removesuffix(".jsonl").partition(".")
        dataset = dataset_stem.replace("_", "-")
        try:
            if library.labels.current(dataset, key):
                continue
            items = read_labels(path, library.labels.sample_ids(dataset))
        except NotFound:
            continue
        added[f"{dataset}/{key}"] = library.labels.put_many(dataset, items, key)
    return added
