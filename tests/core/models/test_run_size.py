"""How many samples a run grades (``models.run_size``): the one rule the request's check, the run's
recording and the dry run read."""

from __future__ import annotations

import pytest

from studio.core.models.run_size import samples_to_grade


@pytest.mark.parametrize(("count", "limit", "samples", "total"), [
    (10, None, None, 10),        # the whole dataset
    (10, 3, None, 3),            # at most the limit
    (2, 5, None, 2),             # a limit over the dataset's size is the dataset
    (0, None, None, 0),          # an empty dataset grades nothing (the engine refuses that run)
    (10, None, [1, 1, 4], 2),    # the indices asked for, each once
    (10, 1, [1, 4, 99, -1], 2),  # only those the dataset has; the limit does not cut a subset
])
def test_a_run_grades_the_dataset_the_limit_or_the_samples_asked(count: int, limit: int | None,
                                                                  samples: list[int] | None, total: int) -> None:
    assert samples_to_grade(count, limit, samples) == total
