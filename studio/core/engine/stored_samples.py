"""A run's samples as stored, told apart from rows that are no sample: such a row is that sample's
error, never the run's.

A dataset's sample rows are outside values: in a shared library a teammate can write any text into
one. Every lane a run reads samples by (parsed ``Sample``s, a suite's stored JSON, a built-in
check's text columns, a cluster's blocks) passes its batch through ``StoredSamples.split``:
each row is read by the one reader (``store.datasets.read_sample``); a row that does not validate
leaves the batch and becomes an error result whose sentence names the dataset, the sample, the field
and the author (``BrokenRow``), graded by nobody. The others are graded as before, and the run ends
as a run with per-sample errors does (``runs show``, ``--resume`` and ``--retry-errors`` read it).

A run of one sandboxed function grader hands the worker the stored JSON unparsed (the raw lane,
its speed): there only the rows of samples that failed are read (``runner._Slots._grade_raw_checked``),
a broken one gets its sentence, and a good one that failed with it is graded again without it. A
suite whose every grader takes the stored JSON (sandboxed functions) does the same
(``_grade_suite_checked``): reading every row cost 2-15 us a sample on the host for nothing but to
find the rare broken one, which the workers fail anyway (``failed_rows``, ``regraded``;
bench/suite_throughput.py ``--raw-suite``). A broken row is still that sample's error for every
grader, with the same sentence, and the others' results are the parsed path's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from studio.core.models import Outcome, Sample
from studio.core.models.broken import BrokenRow
from studio.core.store import Library
from studio.core.store.database import DriverRow
from studio.core.store.datasets import DatasetRecord, read_sample
from studio.core.store.ledger import GraderRow
from studio.core.store.runs import ROW_IDX, ROW_STATUS, outcome_values

from .plan import Partial, RunPlan, assemble

_COMPLETION = itemgetter(2)  # of a text row (store/run_inputs.py)
#: where a suite's per-grader row holds its sample's index (its status: where a result row's is)
_GRADER_IDX = GraderRow._fields.index("sample_idx")
#: the statuses of a sample that may have failed for its row (a row that is no JSON fails the
#: worker's whole request; a field of the wrong type fails the payload's builder)
_FAILED = ("error", "invalid")
#: a broken row of a batch: its idx, its sample id, what the person is told
Broken = tuple[int, str, BrokenRow]


@dataclass(frozen=True)
class StoredSamples:
    """The dataset a run reads, for telling its broken rows apart."""

    dataset: DatasetRecord

    @classmethod
    def of_run(cls, library: Library, run_id: int) -> StoredSamples:
        return cls(library.datasets.get(library.runs.get(run_id).dataset, include_deleted=True))

    def read(self, idx: int, data: str | bytes) -> Sample | BrokenRow:
        return read_sample(lambda: self.dataset, idx, data)

    def split(self, batch: Sequence[DriverRow], *, texts: bool = False
              ) -> tuple[Sequence[DriverRow], list[Sample], list[Broken]]:
        """``batch``'s rows that hold a sample (as they came), the samples they hold, and the broken rows. ``batch``: (idx, sample id, stored JSON)
        rows; ``texts``: a built-in check's (idx, sample id, completion, expected, JSON or None)
        rows, of which only those without a completion are read (no sample is parsed for the rest,
        and no ``Sample`` is returned)."""
        if texts and None not in map(_COMPLETION, batch):  # a built-in run's every batch: nothing to read
            return batch, [], []
        good: list[DriverRow] = []
        parsed: list[Sample] = []
        broken: list[Broken] = []
        for row in batch:
            data = row[4] if texts else row[2]
            if data is None:
                good.append(row)
                continue
            read = self.read(row[0], data)
            if isinstance(read, BrokenRow):
                broken.append((row[0], row[1], read))
                continue
            if not texts:
                parsed.append(read)
            good.append(row)
        return good, parsed, broken


def broken_results(plan: RunPlan, run_id: int, broken: Sequence[Broken], partial: Partial
                   ) -> tuple[list[DriverRow], list[DriverRow]]:
    """The result rows (and a suite's per-grader rows) of broken samples: each one's error, the
    ``BrokenRow``'s sentence, for every grader that had not graded it yet."""
    if not broken:
        return [], []
    if not plan.suite:
        return [outcome_values(run_id, idx, sid, Outcome.failure(row.sentence())) for idx, sid, row in broken], []
    rows = [(idx, sid, "") for idx, sid, _ in broken]
    graded = []
    for planned in plan.graders:  # (a grader that graded the sample before keeps its grade)
        wanted = [k for k, (idx, _, _) in enumerate(broken) if planned.slot not in partial.get(idx, ())]
        graded.append((planned.slot, wanted, [Outcome.failure(broken[k][2].sentence()) for k in wanted]))
    return assemble(plan, run_id, rows, graded, partial, False)


def failed_rows(batch: Sequence[DriverRow], rows: Sequence[DriverRow],
                grader_rows: Sequence[DriverRow]) -> list[DriverRow]:
    """``batch``'s stored rows whose sample failed with some grader (``rows``: the sample rows,
    ``grader_rows``: a suite's per-grader rows, as graded): the only rows the raw lanes read."""
    failed = {row[ROW_IDX] for row in rows if row[ROW_STATUS] in _FAILED}
    failed.update(row[_GRADER_IDX] for row in grader_rows if row[ROW_STATUS] in _FAILED)
    return [row for row in batch if row[0] in failed] if failed else []


Rows = tuple[list[DriverRow], list[DriverRow]]


def regraded(batch: Sequence[DriverRow], first: Rows, again: Rows, again_idx: set[int], errors: Rows,
             broken: Sequence[Broken]) -> Rows:
    """A raw suite batch's rows (``first``: sample rows and per-grader rows, graded with every
    stored row) with the failed samples' replaced: the good ones (``again_idx``) by ``again``,
    graded without the broken rows, and the ``broken`` ones by their ``errors``
    (``broken_results``). In the parsed path's order: the good samples' rows in the batch's order,
    then the broken ones'."""
    drop = again_idx | {idx for idx, _, _ in broken}
    position = {row[0]: k for k, row in enumerate(batch)}
    kept = [row for row in first[0] if row[ROW_IDX] not in drop] + again[0]
    kept.sort(key=lambda row: position[row[ROW_IDX]])
    per_grader = [row for row in first[1] if row[_GRADER_IDX] not in drop] + again[1]
    per_grader.sort(key=lambda row: position[row[_GRADER_IDX]])
    return kept + errors[0], per_grader + errors[1]
