"""A run's plan: which graders (slots) grade each sample, and how a sample's rows are made.

The runner's unit is (sample x grader). A run of one grader is a plan of one slot whose rows are the
grader's own; a suite run's plan has a slot per grader, and each finished sample becomes one row in
``results`` (the overall score by the suite's rule, every grader's score under ``scores`` by key)
plus the per-grader rows that say more than a plain score (``grader_results``). A sample that not
every grader finished (a cancel cut the batch short) keeps only its finished graders' rows, so a
resume grades the missing graders and nothing twice. The local engine and the Ray driver both build
their rows here: one rule, no second code path.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from studio.core.graders.composite import combine
from studio.core.json_types import JsonObject
from studio.core.models import CompositeGrader, GraderDefinition, Outcome
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, decide, decide_outcome
from studio.core.store.database import DriverRow
from studio.core.store.runs import grader_values, outcome_values

SCORED = ("ok", "invalid")
#: what a scorer gave for one sample: an Outcome, or a plain score as a float (``score_values``)
Graded = float | Outcome  # the statuses whose score counts (invalid ones count as the 0 they were given)
#: a suite run's samples some graders finished and others not: sample index -> {slot: what that
#: grader gave} (the store's Outcomes at a resume, ``runs.partial``; a plain score's float too once
#: a batch was cut short, ``assemble``), updated in place as the run goes
Partial = dict[int, dict[int, Graded]]


def partial_of(stored: Mapping[int, Mapping[int, Outcome]]) -> Partial:
    """The store's ``runs.partial`` (or ``runs.errored``) answer as the engine keeps and updates it."""
    return {idx: dict(slots) for idx, slots in stored.items()}


@dataclass
class PlannedGrader:
    slot: int
    key: str
    version: int
    definition: GraderDefinition
    weight: float = 1.0
    #: the pass threshold of this grader in the suite (None: the run's pass threshold)
    threshold: float | None = None


@dataclass
class RunPlan:
    graders: list[PlannedGrader]
    #: None for a run of one grader; else the suite's rule: none, mean, all-pass or composite
    overall: str | None = None
    composite: CompositeGrader | None = None
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    _metric_keys: list[str] = field(default_factory=list)
    _json_prefixes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._metric_keys = [getattr(g.definition, "metric", None) and g.definition.metric.key or "score"
                             for g in self.graders]
        keys = [json.dumps(g.key, ensure_ascii=False) for g in self.graders]
        #: '{"a": ', ', "b": ' ...: the scores JSON of a row of plain scores, a float after each
        self._json_prefixes = ["{" + keys[0] + ": "] + [", " + k + ": " for k in keys[1:]] if keys else []
        #: the same text as one %-format of the scores in slot order (``plain_rows``)
        self._json_format = "".join(p.replace("%", "%%") + "%r" for p in self._json_prefixes) + "}"

    def metric_key(self, slot: int) -> str:
        """The key of the score a plain score of ``slot``'s grader stands for."""
        return self._metric_keys[slot]

    @property
    def suite(self) -> bool:
        return self.overall is not None

    def threshold(self, planned: PlannedGrader) -> float:
        return self.pass_threshold if planned.threshold is None else planned.threshold

    # -- one sample's rows ---------------------------------------------------------------------
    def sample_rows(self, run_id: int, idx: int, sample_id: str, outcomes: Mapping[int, Graded],
                    fresh: Sequence[int]) -> tuple[DriverRow | None, list[DriverRow]]:
        """The sample row (None while a grader is missing) and the per-grader rows to write for the
        slots in ``fresh`` (those graded now; ``outcomes`` also holds earlier ones, for the overall).
        A float is a plain score (a scorer's ``score_values`` lane: no Outcome was built for it)."""
        complete = len(outcomes) == len(self.graders)
        graders: list[DriverRow] = []
        for slot in fresh:
            outcome = outcomes[slot]
            if type(outcome) is float:
                if not complete:
                    graders.append(grader_values(run_id, slot, idx, self.plain_outcome(slot, outcome)))
            elif not complete or not self._plain(slot, outcome):  # type: ignore[arg-type]
                graders.append(grader_values(run_id, slot, idx, outcome))  # type: ignore[arg-type]
        if not complete:
            return None, graders
        values = [outcomes[p.slot] for p in self.graders]
        if all(type(v) is float and math.isfinite(v) for v in values):
            return self._plain_row(run_id, idx, sample_id, values), graders  # type: ignore[arg-type]
        full = {slot: self.plain_outcome(slot, v) if type(v) is float else v for slot, v in outcomes.items()}
        return outcome_values(run_id, idx, sample_id, self.overall_outcome(full)), graders  # type: ignore[arg-type]

    def _plain_row(self, run_id: int, idx: int, sample_id: str, values: list[float]) -> DriverRow:
        """The row ``overall_outcome`` gives when every grader gave a plain score, built directly
        (the hot path of a suite of built-in checks)."""
        text = "".join(prefix + repr(v) for prefix, v in zip(self._json_prefixes, values, strict=True)) + "}"
        usable = list(zip(self.graders, values, strict=True))
        score = self._rule(usable, [decide("ok", v, None, self.threshold(p)) == "pass" for p, v in usable]
                           if self.overall == "all-pass" else [])
        return (run_id, idx, sample_id, "ok", score, text, None, None, None, None, 0.0, 0, 0, False, 0)

    def plain_rows(self, run_id: int, batch: Sequence[DriverRow],
                   columns: Sequence[Sequence[Graded]]) -> list[DriverRow] | None:
        """The sample rows of a batch every grader (``columns``, in slot order) scored with a finite
        plain score, samples that had no grader done before: the rows ``sample_rows`` gives them
        (``_plain_row``), a batch at a time; None when some value is not such a score (``assemble``)."""
        isfinite = math.isfinite
        for column in columns:
            if len(column) != len(batch) or set(map(type, column)) - {float}:
                return None
            if not all(map(isfinite, column)):  # type: ignore[arg-type]  # floats, checked above
                return None
        text = self._json_format
        if self.overall == "mean":
            weights = [p.weight for p in self.graders]
            if sum(weights) != 0:  # (else each row's ``_rule``: no overall score)
                return [(run_id, row[0], row[1], "ok", weighted_mean(weights, values), text % values,
                         None, None, None, None, 0.0, 0, 0, False, 0)
                        for row, values in zip(batch, zip(*columns, strict=True), strict=True)]
        elif self.overall == "none":
            return [(run_id, row[0], row[1], "ok", None, text % values, None, None, None, None, 0.0, 0, 0, False, 0)
                    for row, values in zip(batch, zip(*columns, strict=True), strict=True)]
        return [self._plain_row(run_id, row[0], row[1], list(values))
                for row, values in zip(batch, zip(*columns, strict=True), strict=True)]

    def _plain(self, slot: int, outcome: Outcome) -> bool:
        """A plain score: the sample row's ``scores`` says all of it (no grader row needed)."""
        if outcome.status != "ok" or outcome.score is None or outcome.rationale or outcome.details \
                or outcome.error or outcome.raw is not None or outcome.prompt_tokens or outcome.completion_tokens \
                or outcome.cached:
            return False
        scores = outcome.scores
        return not scores or (len(scores) == 1 and scores.get(self._metric_keys[slot]) == outcome.score)

    def plain_outcome(self, slot: int, score: float) -> Outcome:
        """The per-grader Outcome a plain score in the sample row stands for."""
        return Outcome(score=score, scores={self._metric_keys[slot]: score})

    # -- the overall rule ----------------------------------------------------------------------
    def overall_outcome(self, outcomes: Mapping[int, Outcome]) -> Outcome:
        """The sample's row: every grader's score by key, and the overall score by the rule. An
        error of any grader makes the overall an error; NA graders are left out; all NA is NA."""
        scores: dict[str, float] = {}
        statuses: dict[str, str] = {}
        errors: list[str] = []
        usable: list[tuple[PlannedGrader, float]] = []
        passed: list[bool] = []  # by the pass rule, for all-pass
        for planned in self.graders:
            outcome = outcomes[planned.slot]
            if outcome.status != "ok":
                statuses[planned.key] = outcome.status
            if outcome.status in SCORED and outcome.score is not None:
                scores[planned.key] = float(outcome.score)
                usable.append((planned, float(outcome.score)))
                passed.append(decide_outcome(outcome, self.threshold(planned)) == "pass")
            elif outcome.status == "error" or (outcome.status != "skipped" and outcome.score is None):
                errors.append(f"{planned.key}: {outcome.error or 'no score'}")
        tokens = {"prompt_tokens": sum(o.prompt_tokens for o in outcomes.values()),
                  "completion_tokens": sum(o.completion_tokens for o in outcomes.values()),
                  "cached_tokens": sum(o.cached_tokens for o in outcomes.values()),
                  "duration_ms": sum(o.duration_ms for o in outcomes.values()),
                  "cached": all(o.cached for o in outcomes.values())}
        details: JsonObject = {"overall": self.overall}
        if statuses:
            details["statuses"] = statuses
        if errors:
            return Outcome(status="error", scores=scores, details=details, error="; ".join(errors), **tokens)
        if not usable:
            return Outcome(status="skipped", scores=scores, details=details, rationale="every grader said NA", **tokens)
        score = self._rule(usable, passed)
        return Outcome(status="ok", score=score, scores=scores, details=details, **tokens)

    def _rule(self, usable: list[tuple[PlannedGrader, float]], passed: list[bool]) -> float | None:
        if self.overall == "none":
            return None
        if self.overall == "mean":
            return weighted_mean([p.weight for p, _ in usable], [s for _, s in usable])
        if self.overall == "all-pass":
            return 1.0 if all(passed) else 0.0
        if self.overall == "composite" and self.composite is not None:
            by_key = {p.key: s for p, s in usable}
            parts = [(c.grader.key, c.weight, by_key[c.grader.key]) for c in self.composite.components
                     if c.grader.key in by_key]
            if not parts or (self.composite.mode == "weighted" and not any(w > 0 for _, w, _ in parts)):
                return None
            return combine(self.composite.mode, parts)[0]
        return None  # no overall rule: the row still holds every grader's score


def weighted_mean(weights: Sequence[float], values: Sequence[float]) -> float | None:
    """A sample's overall score by a suite's "mean" rule: its graders' scores weighted, summed in
    slot order, over the weights' sum (None when they sum to 0). One function for the row built
    from outcomes and the row built from a batch of plain scores, so the two cannot differ."""
    total = sum(weights)
    return sum(map(operator.mul, weights, values)) / total if total != 0 else None


def assemble(plan: RunPlan, run_id: int, batch: Sequence[DriverRow],
             graded: Sequence[tuple[int, list[int], Sequence[Graded]]], partial: Partial,
             cancelled: bool, stopped: bool = False) -> tuple[list[DriverRow], list[DriverRow]]:
    """A suite batch's rows from each slot's outcomes (``graded``: slot, batch positions, outcomes),
    merged with the graders a sample had before (``partial``, updated in place). Shared by the local
    engine and the Ray driver. An outcome cut short by cancel is dropped: nobody graded it; so is
    every error once the run ``stopped`` because samples cannot be graded (runner.py): a resume
    asks that grader again, and the sample keeps the other graders' grades."""
    have: list[dict[int, Graded]] = [dict(partial[row[0]]) if row[0] in partial else {} for row in batch]
    fresh: list[list[int]] = [[] for _ in batch]
    for slot, positions, outcomes in graded:
        for k, outcome in zip(positions, outcomes, strict=True):
            if isinstance(outcome, Outcome) and ((cancelled and outcome.error == "cancelled")
                                                 or (stopped and outcome.status == "error")):
                continue
            have[k][slot] = outcome
            fresh[k].append(slot)
    sample_rows: list[DriverRow] = []
    grader_rows: list[DriverRow] = []
    for k, row in enumerate(batch):
        idx, sid = row[0], row[1]
        if not fresh[k]:
            continue
        sample_row, rows = plan.sample_rows(run_id, idx, sid, have[k], fresh[k])
        grader_rows.extend(rows)
        if sample_row is None:
            partial[idx] = have[k]
        else:
            partial.pop(idx, None)
            sample_rows.append(sample_row)
    return sample_rows, grader_rows


def scores_of(row_scores: str | None) -> JsonObject:
    """A sample row's ``scores`` JSON (every grader's score by key in a suite run), decoded."""
    if not row_scores:
        return {}
    try:
        value = json.loads(row_scores)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
