"""What a run reports as it goes: ``Progress`` events, the rows they carry, and the batch-growth rule.

Its own module (below the runner and the executors alike), so the Ray driver imports what it shares
with the engine's loop without importing the runner that picks the executor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

from studio.core.models import Outcome
from studio.core.store.database import DriverRow
from studio.core.store.runs import ROW_IDX, row_outcome


class Written(Sequence[tuple[int, Outcome]]):
    """The results one progress event reports, as (sample_idx, Outcome) pairs: the writer holds the
    stored rows, and each Outcome is rebuilt from its row only when read (a run writes tens of
    thousands a second and most listeners want the indices alone: ``Progress.written_indices``)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Sequence[DriverRow]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> tuple[int, Outcome]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, Outcome]]: ...
    def __getitem__(self, index: int | slice) -> tuple[int, Outcome] | list[tuple[int, Outcome]]:
        if isinstance(index, slice):
            return [(row[ROW_IDX], row_outcome(row)) for row in self._rows[index]]
        row = self._rows[index]
        return row[ROW_IDX], row_outcome(row)

    def indices(self) -> list[int]:
        return [row[ROW_IDX] for row in self._rows]


@dataclass
class Progress:
    run_id: int
    done: int
    total: int
    counts: dict[str, int]
    elapsed: float
    #: the (sample_idx, outcome) pairs written since the previous event (a list, or ``Written``)
    written: Sequence[tuple[int, Outcome]] = field(default_factory=list)
    finished: bool = False
    #: calls waiting on a judge/server right now (None for graders that make none)
    in_flight: int | None = None

    def written_indices(self) -> list[int]:
        """The sample indices of ``written``, without rebuilding an Outcome each."""
        if isinstance(self.written, Written):
            return self.written.indices()
        return [idx for idx, _ in self.written]

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        if self.rate <= 0:
            return None
        return (self.total - self.done) / self.rate


def grown_size(size: int, count: int, seconds: float, target: float, maximum: int) -> int:
    """The next batch size after ``count`` samples took ``seconds``: aimed at ``target`` seconds a
    batch, at most ``maximum``, and growing at most 4x per step so one lucky fast batch does not jump
    to the maximum (shared by the local feeder and the Ray driver's blocks)."""
    per_sample = seconds / count
    wanted = int(target / per_sample) if per_sample > 0 else maximum
    return max(1, min(maximum, wanted, max(size, count) * 4))
