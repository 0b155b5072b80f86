"""How many samples a run grades: the dataset's, at most ``limit``, or the ``samples`` asked for that it has.

Why here: it is arithmetic over a dataset's size and a run's options, nothing more. The check of a
run request, the recording of a run (engine/planning.py ``run_total``, which refuses a run of
nothing) and the dry run's estimate each read it from this one place, after the library has told
them the dataset's size; before, the dry run kept a copy of its own.
"""

from __future__ import annotations

from collections.abc import Iterable


def samples_to_grade(count: int, limit: int | None = None, samples: Iterable[int] | None = None) -> int:
    """Of a dataset of ``count`` samples: all of them, at most ``limit``, or as many of the indices
    ``samples`` as it has (each once; ``limit`` does not apply to a subset)."""
    if samples is not None:
        return len({i for i in samples if 0 <= i < count})
    return count if limit is None else min(limit, count)
