"""A run's tallies at its end, as the store answers them in one reading.

The run's writer kept every tally as it wrote (engine/written_tally.py ``WrittenTallies``) and says
what it wrote (``Written``); the store holds that against its rows (the run's graders and
thresholds, the rows' counts) and answers once (``end_tallies``): the writer's tallies when they
are the stored rows', else the ones counted from the rows; the ``STORED_KEY`` entry a completed run
keeps, and what the ``results`` rows add up to (``RowFacts``), from which the engine makes the
run's figures. The engine used to climb back for each of these between the store's answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from studio.core.json_types import JsonObject

from .ledger import Tally
from .run_graders import RunGrader, read_settled, stored_form, stored_tallies, written_counts
from .runs import RowFacts

if TYPE_CHECKING:
    from .library import Library


@dataclass(frozen=True)
class WrittenRows:
    """The rows a writer wrote: its graders by (slot, key) with their thresholds, the run's threshold,
    and the counts ``run_graders.written_counts`` gives of the stored rows."""

    slots: list[tuple[int, str]]
    thresholds: list[float]
    threshold: float
    counts: list[int]

    def mismatch(self, graders: Sequence[RunGrader], threshold: float, stored_counts: Sequence[int]) -> str | None:
        """Why tallies of these rows are not the stored rows' for ``graders`` (``run_graders``) at
        the run's ``threshold`` (``stored_counts``: ``written_counts``), or None when they are."""
        if [(g.slot, g.key) for g in graders] != self.slots or [float(g.threshold) for g in graders] != self.thresholds:
            return "the run's graders or thresholds are not the plan's"
        if float(threshold) != self.threshold:
            return "asked at another threshold"
        if list(stored_counts) != self.counts:
            return f"stored rows {list(stored_counts)} are not the rows written {self.counts}"
        return None


@dataclass(frozen=True)
class Written:
    """What a writer says it wrote: its rows, each grader's tally in slot order, the ``results``
    rows' tally at the run's threshold, ``runs.facts``' metric sums and panels (None: read them)."""

    rows: WrittenRows
    tallies: list[Tally]
    overall: Tally
    metric_sums: dict[str, tuple[float, int]]
    panels: JsonObject | None


@dataclass(frozen=True)
class EndTallies:
    """The store's answer at a run's end."""

    #: the ``results`` rows' tally at the run's threshold
    overall: Tally
    #: the ``run_graders.STORED_KEY`` entry: every grader's tally at its threshold, and ``overall``
    stored: JsonObject
    #: what the ``results`` rows add up to (``runs.facts``)
    facts: RowFacts
    #: the writer's tallies were the stored rows' and were used
    as_written: bool


def end_tallies(library: Library, run_id: int, threshold: float, written: Written | None) -> EndTallies:
    """Run ``run_id``'s tallies at its end: ``written``'s when they are its stored rows', else
    computed from the rows (a run's one pass over its results). The run is read once, its rule
    settled at ``threshold`` (``read_settled``), whichever they are; then what its rows add up to
    (``runs.facts``) is asked once, with what the writer kept of it when its tallies are used, and
    the graders just read."""
    reading, rule = read_settled(library, run_id, threshold)
    graders = reading.graders
    counts = [] if written is None else written_counts(library, run_id)
    kept = written if written is not None and written.rows.mismatch(graders, threshold, counts) is None else None
    if kept is None:
        overall, stored = stored_tallies(library, run_id, threshold, (reading, rule))
    else:
        overall, stored = kept.overall, stored_form(graders, kept.tallies, kept.overall, threshold)
    facts = library.runs.facts(run_id, threshold, tally=overall, metric_sums=None if kept is None else kept.metric_sums,
                               panels=None if kept is None else kept.panels,
                               keys=sorted(g.key for g in graders) if reading.row.suite else [])
    return EndTallies(overall=overall, stored=stored, facts=facts, as_written=kept is not None)
