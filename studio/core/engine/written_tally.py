"""The tallies of the rows this process wrote, added up as it writes them: a second copy of a run's
end-of-run tally, kept for speed.

Why: at a run's end every grader's ``Tally`` (store/run_graders) used to be computed in SQL from the
stored rows, each row's pass-rule CASE and nineteen sums a grader, ~3 us a grader a row in SQLite's
VM, plus the rows' tally, the per-key means of ``runs.aggregates`` and the usage probe: a third of a
million-sample built-in run's CPU and most of a suite's extra over one grader
(bench/profiles/issue38_suite_after_tally.txt). The runner's writer holds every row it writes while
the row's values are still Python values, so it adds them up there: a batch of plain scores (status
ok, no details, no verdict) in C-level passes (``pass_rule.plain_decisions``...), any other
row through ``pass_rule.decide`` (the one rule, never a copy of it).

Why it can be trusted: it is used only when this process wrote every row of the run exactly once,
and checked before it is: a fresh run (nothing stored before it started: no resume), graded by this
process's own loop (not the Ray driver's), every value one the store keeps as the Python value it was
(finite numbers, JSON details, bounded token sums), and at the end the run's stored rows, counted
from their indexes, are the ones written here (``run_graders.written_counts``: count and sum of
sample indices of ``results`` and of ``grader_results``): a sample written twice (replaced), a row
written by anyone else, or one removed, changes them. Otherwise the run's end computes in SQL as
before. What stays out of reach of that check: a row replaced by another writer, same sample, same
count, while this process holds the run (``runs.claim`` refuses any other grader of a running run,
and nothing else writes a run's results).

Floats: SQL adds a column up in its scan order, one row after another; the scores, their squares
and the per-key means are added here as exact parts (``exact_parts``: ``math.fsum`` and its
remainder), so they do not depend on the batches the rows came in (two lanes writing the same rows
give the same mean); the time graded is a plain sum. Against SQL's they may differ in their last
bits: equal to a relative 1e-12 (tests/core/engine/test_written_tally.py); counts, minima, maxima
and token sums are exact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from operator import itemgetter

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models.pass_rule import SCORED_STATUSES, decide, plain_decisions, scored_score
from studio.core.store.database import DriverRow
from studio.core.store.ledger import (
    AT,
    DEFAULTS,
    OUTCOME,
    SPLITS,
    Batch,
    Folding,
    GraderRow,
    Tally,
    Total,
    sum_parts,
)
from studio.core.store.run_end import Written, WrittenRows
from studio.core.store.run_graders import RunGrader

from .plan import RunPlan

#: where a result row (store/ledger.py ``ResultRow``) and a suite's per-grader row (``GraderRow``)
#: hold the fields read here: the same places from ``status`` on; the sample index of each
_IDX_RESULT, _IDX_GRADER = AT["sample_idx"], GraderRow._fields.index("sample_idx")
_STATUS, _SCORE, _SCORES, _DETAILS, _DURATION = (AT[n] for n in ("status", "score", "scores", "details", "duration_ms"))
_TOKENS = tuple(itemgetter(AT[n]) for n in ("prompt_tokens", "completion_tokens", "cached_tokens"))
_CACHED = itemgetter(AT["cached"])
_OK = {"ok"}
_NONE = {None}
#: token sums are stored as SQL sums of doubles: exact below this
_EXACT_INT = 2 ** 53
#: a part of a per-key sum kept here: below the limit of a split sum's low part (``ledger.SPLITS``)
_HUGE = SPLITS["sum"].limit


class Untrusted(Exception):
    """A value the store may not hold as the Python value it is (the SQL tally would differ)."""


def _number(value: object) -> float:
    if type(value) is not float and type(value) is not int:
        raise Untrusted(f"a score of type {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise Untrusted("a score that is not finite")  # SQLite stores NaN as NULL, PostgreSQL as NaN
    return number


def _score(value: object) -> float | None:
    """A row's score as the ledger reads it: a number, or None for none (and for a number that is
    not finite: the pass rule's NA, what SQL's ``scored_sql`` and its decision read it as)."""
    if value is None:
        return None
    if type(value) is not float and type(value) is not int:
        raise Untrusted(f"a score of type {type(value).__name__}")
    number = float(value)
    return number if math.isfinite(number) else None


class Sums:
    """One tally being added up: the ledger's folds (store/ledger.py ``Folding``) over batches of
    rows read here, the rows' values checked to be the ones the store keeps."""

    __slots__ = ("folding", "endpoint")

    def __init__(self) -> None:
        self.folding = Folding()
        #: a row's details name an endpoint (the usage probe of ``usage.endpoint_rows`` would find it)
        self.endpoint = False

    def tally(self) -> Tally:
        tally = self.folding.tally()
        if max(tally.prompt_tokens, tally.completion_tokens, tally.cached_tokens) >= _EXACT_INT:
            raise Untrusted("token sums beyond a double's exact integers")
        if not all(map(math.isfinite, (tally.score_sum, tally.score_sumsq, tally.duration_ms))):
            raise Untrusted("sums beyond a double's range")
        return tally

    def add_plain(self, scores: Sequence[float], threshold: float) -> tuple[float, ...]:
        """Rows of status ok, no details, no tokens, no time, each with a finite float score: the
        grader's rows a suite's plain scores stand for (``rows_sql(True)`` with no grader row).
        Returns the scores' sum."""
        if not scores:
            return ()
        count = len(scores)
        return self.folding.add(Batch(rows=count, counts={"status": {"ok": count},
                                                          "decision": plain_decisions(scores, threshold, True)},
                                      scores=scores))

    def add_rows(self, rows: Sequence[DriverRow], threshold: float) -> None:
        """Result rows (``outcome_values``) or per-grader rows (``grader_values``) at ``threshold``."""
        if not rows:
            return
        scores = list(map(itemgetter(_SCORE), rows))
        kinds = set(map(type, scores))
        if bare(rows) and kinds <= {float, type(None)}:  # the usual batch: plain scores (or a suite's NA)
            finite = kinds == {float} and all(map(math.isfinite, scores))
            scored = scores if finite else [s for s in scores if s is not None and math.isfinite(s)]
            count = len(rows)
            self.folding.add(Batch(rows=count, counts={"status": {"ok": count},
                                                       "decision": plain_decisions(scores, threshold, finite)},
                                   scores=scored, costs=self._costs(rows)))
            return
        self._each(rows, threshold)

    @staticmethod
    def _costs(rows: Sequence[DriverRow]) -> dict[str, float]:
        durations = list(map(itemgetter(_DURATION), rows))
        if set(map(type, durations)) - {float, int}:
            raise Untrusted("a duration that is not a number")
        costs: dict[str, float] = {"duration_ms": sum(durations)}
        for name, getter in zip(("prompt_tokens", "completion_tokens", "cached_tokens"), _TOKENS, strict=True):
            total = sum(map(getter, rows))
            if type(total) is not int:
                raise Untrusted("a token count that is not an integer")
            costs[name] = total
        cached = sum(map(_CACHED, rows))
        if type(cached) is not int:
            raise Untrusted("a cached flag that is not 0 or 1")
        costs["cached"] = cached
        return costs

    def _each(self, rows: Sequence[DriverRow], threshold: float) -> None:
        """Row by row through the pass rule (a judge's verdicts, errors, NA, details)."""
        scored: list[float] = []
        statuses: dict[str, int] = {}
        decisions: dict[str, int] = {}
        for row in rows:
            status, details = row[_STATUS], row[_DETAILS]
            if type(status) is not str:
                raise Untrusted("a status that is not text")
            score = _score(row[_SCORE])
            verdict = None
            if details is not None:
                parsed = _json_text(details, "details")
                if isinstance(parsed, dict):
                    verdict = parsed.get("verdict")
                if '"endpoint"' in details:
                    self.endpoint = True
            decision = decide(status, score, verdict, threshold)
            decisions[decision] = decisions.get(decision, 0) + 1
            statuses[status] = statuses.get(status, 0) + 1
            counted = scored_score(status, score)
            if counted is not None:
                scored.append(counted)
        self.folding.add(Batch(rows=len(rows), counts={"status": statuses, "decision": decisions}, scores=scored,
                               costs=self._costs(rows)))


#: a grader row's outcome columns when it said nothing but a score (the store's defaults)
_NOTHING_SAID = {**dict.fromkeys(OUTCOME), **DEFAULTS, "status": "ok"}


def _plain_grader_row(score: float | None) -> DriverRow:
    """The values of the grader row a plain score in a sample row stands for (no key: not written)."""
    return GraderRow(None, None, None, **{**_NOTHING_SAID, "score": score})  # type: ignore[arg-type]


def bare(rows: Sequence[DriverRow]) -> bool:
    """Every row is status ok without details (no verdict: the rule reads the score alone)."""
    return set(map(itemgetter(_STATUS), rows)) == _OK and set(map(itemgetter(_DETAILS), rows)) == _NONE


class Means:
    """The sums and counts behind a run's per-key means (store/runs ``_metric_sums``)."""

    def __init__(self) -> None:
        self.sums: dict[str, Total] = {}
        self.counts: dict[str, int] = {}

    def add(self, key: str, parts: Iterable[float], count: int) -> None:
        """``count`` values of ``key`` whose sum is ``parts``' (``exact_parts``). A part from 2**960 on
        (a huge score: ``ledger.Split``) could add up past a double: SQL's split sums say those."""
        parts = tuple(parts)
        if any(not abs(part) < _HUGE for part in parts):
            raise Untrusted("a score whose sum may pass the largest double")
        if count:
            self.sums.setdefault(key, Total()).add(parts)
            self.counts[key] = self.counts.get(key, 0) + count

    def sums_and_counts(self) -> dict[str, tuple[float, int]]:
        return {key: (self.sums[key].value(), count) for key, count in self.counts.items()}


def _json_text(text: object, what: str) -> JsonValue:
    """A stored column's JSON text, decoded; anything else distrusts the kept tally."""
    if type(text) is not str:
        raise Untrusted(f"{what} that are not JSON text")
    try:
        return json.loads(text)
    except ValueError:
        raise Untrusted(f"{what} that are not JSON") from None


def _scores_object(text: object) -> JsonObject:
    parsed = _json_text(text, "scores")
    if not isinstance(parsed, dict):
        raise Untrusted("scores that are not a JSON object")
    return parsed


class WrittenTallies:
    """Every tally a run's end stores, added up from the rows the writer writes (``add``), and the
    counts that say at the end whether they are the stored rows' (``counts``)."""

    def __init__(self, plan: RunPlan) -> None:
        self.suite = bool(plan.suite)
        self.slots = [(p.slot, p.key) for p in plan.graders]
        self.thresholds = [float(plan.threshold(p)) for p in plan.graders]
        self.threshold = float(plan.pass_threshold)
        self.graders = [Sums() for _ in plan.graders]
        #: the ``results`` rows' tally at the run's threshold (a run of one grader at its own: the same)
        self.overall = self.graders[0] if not self.suite and self.thresholds[0] == self.threshold else Sums()
        self.means = Means()
        #: a ``results`` row with details (pairwise and jury panels are read from them)
        self.details = False
        #: a suite's samples with per-grader rows written before their sample row (a batch cut short):
        #: sample index -> those slots (their sample row, if it comes, has no plain score of them)
        self.orphans: dict[int, set[int]] = {}
        #: rows written: ``results`` count and sum of sample indices, then ``grader_results``'
        self.counts = [0, 0, 0, 0]
        #: why it cannot be used (None: it can)
        self.untrusted: str | None = None
        if any('"' in key or "\\" in key for _, key in self.slots):
            self.untrusted = "a grader key the SQL's JSON paths do not name as written"

    def distrust(self, reason: str) -> None:
        if self.untrusted is None:
            self.untrusted = reason

    def add(self, rows: Sequence[DriverRow], grader_rows: Sequence[DriverRow],
            columns: Sequence[Sequence[float]] | None = None) -> None:
        """One write's rows: ``rows`` in ``outcome_values`` form, a suite's ``grader_rows`` in
        ``grader_values`` form; ``columns``: a suite batch of plain scores (``plan.plain_rows``),
        each grader's floats in slot order, that ``rows``' ``scores`` were written from."""
        if self.untrusted is not None:
            return
        counts = self.counts
        counts[0] += len(rows)
        counts[1] += sum(map(itemgetter(_IDX_RESULT), rows))
        counts[2] += len(grader_rows)
        counts[3] += sum(map(itemgetter(_IDX_GRADER), grader_rows))
        try:
            self.overall.add_rows(rows, self.threshold)
            if rows and not self.details and any(map(itemgetter(_DETAILS), rows)):
                self.details = True
            if not self.suite:
                if self.overall is not self.graders[0]:
                    self.graders[0].add_rows(rows, self.thresholds[0])
                self._means_one(rows)
            elif columns is not None and not grader_rows and not (
                    self.orphans and any(row[_IDX_RESULT] in self.orphans for row in rows)):
                for (_, key), sums, threshold, column in zip(self.slots, self.graders, self.thresholds, columns,
                                                             strict=True):
                    self.means.add(key, sums.add_plain(column, threshold), len(column))
            else:
                self._suite_rows(rows, grader_rows)
        except Untrusted as exc:
            self.distrust(str(exc))
        except Exception as exc:  # a value of a kind not foreseen here: never the run's failure
            self.distrust(f"{type(exc).__name__}: {exc}")

    def _means_one(self, rows: Sequence[DriverRow]) -> None:
        """A run of one grader: the mean of each key of the scored rows' ``scores`` (``json_each``).
        Plain rows (``ok_row``: ``{"key": repr(score)}``) are recognised by their text, not parsed."""
        first = rows[0][_SCORES] if rows else None
        if type(first) is str and bare(rows):
            parsed = _scores_object(first)
            if len(parsed) == 1:
                key = next(iter(parsed))
                scores = list(map(itemgetter(_SCORE), rows))
                if set(map(type, scores)) == {float}:
                    text = ("{" + json.dumps(key, ensure_ascii=False) + ": ").replace("%", "%%") + "%r}"
                    # each distinct score's text once (a check's scores are a few values): equal
                    # floats of another text (0.0 and -0.0) only fail the comparison, then parsed
                    texts = {score: text % score for score in set(scores)}
                    if list(map(texts.__getitem__, scores)) == list(map(itemgetter(_SCORES), rows)):
                        self.means.add(key, self._parts(scores), len(scores))
                        return
        for row in rows:
            if row[_STATUS] in SCORED_STATUSES and row[_SCORES] is not None:
                for key, value in _scores_object(row[_SCORES]).items():
                    if value is not None:  # JSON null: no value to average (SQL's NULL)
                        self.means.add(key, (_number(value),), 1)

    @staticmethod
    def _parts(scores: list[float]) -> tuple[float, ...]:
        return sum_parts(scores)

    def _suite_rows(self, rows: Sequence[DriverRow], grader_rows: Sequence[DriverRow]) -> None:
        """A suite batch that is not all plain scores: each grader's own rows, and for every sample
        row the graders without one, the plain score its ``scores`` holds (``rows_sql(True)``)."""
        by_slot: dict[int, list[DriverRow]] = {}
        for row in grader_rows:
            by_slot.setdefault(row[1], []).append(row)
        position = {slot: n for n, (slot, _) in enumerate(self.slots)}
        for slot, own in by_slot.items():
            if slot not in position:
                raise Untrusted(f"a row of slot {slot}, not one of the run's")
            n = position[slot]
            self.graders[n].add_rows(own, self.thresholds[n])
        written = {(row[1], row[2]) for row in grader_rows}
        plain: list[list[DriverRow]] = [[] for _ in self.slots]
        for row in rows:
            for slot in self.orphans.pop(row[_IDX_RESULT], ()):
                written.add((slot, row[_IDX_RESULT]))
            scores = _scores_object(row[_SCORES]) if row[_SCORES] is not None else {}
            counted = row[_STATUS] in SCORED_STATUSES
            for n, (slot, key) in enumerate(self.slots):
                value = scores.get(key)
                number = None if value is None else _number(value)
                if counted and number is not None:
                    self.means.add(key, (number,), 1)
                if (slot, row[_IDX_RESULT]) not in written:
                    plain[n].append(_plain_grader_row(number))
        for n, own in enumerate(plain):
            self.graders[n].add_rows(own, self.thresholds[n])
        if grader_rows:  # grader rows whose sample row is not in this write
            have = set(map(itemgetter(_IDX_RESULT), rows))
            for slot, idx in written:
                if idx not in have:
                    self.orphans.setdefault(idx, set()).add(slot)

    # -- at the run's end ------------------------------------------------------------------------
    def rows(self) -> WrittenRows:
        """The rows written, as the store holds them against its own (store/run_end.py)."""
        return WrittenRows(slots=list(self.slots), thresholds=list(self.thresholds), threshold=self.threshold,
                           counts=list(self.counts))

    def usable(self, graders: Sequence[RunGrader], threshold: float, stored_counts: Sequence[int]) -> bool:
        """Whether these tallies are the stored rows' (``stored_counts``: ``run_graders.written_counts``)
        for ``graders`` (``run_graders.run_graders``) at the run's ``threshold``."""
        if self.untrusted is not None:
            return False
        problem = self.rows().mismatch(graders, threshold, stored_counts)
        if problem is not None:
            self.distrust(problem)
        return self.untrusted is None

    def claim(self) -> Written | None:
        """What the writer wrote, with its tallies, for the store to hold against its rows at the
        run's end (``run_end.end_tallies``); None when they cannot be used."""
        if self.untrusted is not None:
            return None
        try:
            tallies, overall = self.tallies()
        except Untrusted as exc:
            self.distrust(str(exc))
            return None
        return Written(rows=self.rows(), tallies=tallies, overall=overall, metric_sums=self.metric_sums(),
                       panels=self.panels())

    def tallies(self) -> tuple[list[Tally], Tally]:
        """(each grader's tally in slot order, the ``results`` rows' tally); raises ``Untrusted``."""
        return [s.tally() for s in self.graders], self.overall.tally()

    def metric_sums(self) -> dict[str, tuple[float, int]]:
        """``runs.facts``' per-key sums and counts: a suite's by its graders' keys only (``_metric_sums``)."""
        sums = self.means.sums_and_counts()
        if self.suite:
            return {key: sums[key] for _, key in sorted(self.slots, key=itemgetter(1)) if key in sums}
        return sums

    def panels(self) -> JsonObject | None:
        """``runs.aggregates``' panels: none when no ``results`` row has details; else None (read them)."""
        return None if self.details else {}

    def names_no_endpoint(self, slot: int) -> bool:
        """No row of the grader in ``slot`` has details naming an endpoint (its usage probe finds none)."""
        n = [s for s, _ in self.slots].index(slot)
        return not self.graders[n].endpoint
