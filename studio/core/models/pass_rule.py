"""The one pass rule: whether a result passed, failed, was not applicable (NA) or errored.

Why one module: every surface (the grid's filters, ``runs show``, JUnit, markdown, the pass rate, a
suite's all-pass rule, the probes, a jury's jurors, agreement tables) must call a result the same
thing, and before this each had its own copy that disagreed (one ignored a judge's verdict, one used
a literal 0.5). The rule is written once, as data (``RULE``: ordered clauses, the first that holds
decides); ``decide`` reads it in Python and ``decision_sql`` turns the same clauses into an SQL
``CASE`` (through SQLAlchemy), so the grid's SQL filters and the Python readers cannot drift apart
(tests/core/test_pass_rule.py holds them equal on random results).

The rule, in order:

1. status ``error`` (the grader could not grade: timeout, crash, endpoint down) is an **error**;
2. status ``skipped`` (a judge's NA) is **na**: left out of the pass rate, never a fail;
3. status ``invalid`` (a return that is not a score, scored 0 by MKA1's rule) is a **fail**;
4. an ok result whose judge gave its own verdict PASS or FAIL is that verdict, whatever its score;
5. an ok result without a score (and without a verdict) is **na**; a score that is not a finite
   number (NaN, ±inf: a teammate's row, a hand edit) is no score: NA is not zero, and SQLite stores
   NaN as NULL while PostgreSQL keeps it and orders it above every number;
6. an ok result's score at or above the threshold is a **pass**, below it a **fail**.

The pass rate is pass / (pass + fail); the mean counts ok and invalid scores (``SCORED_STATUSES``)
that are finite numbers (``scored_score``, ``scored_sql``).
A run's threshold is read by ``run_threshold``: the one the run was started with (its settings),
else the one its stored aggregates were computed at, else ``DEFAULT_PASS_THRESHOLD``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, Protocol

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject, JsonValue

if TYPE_CHECKING:  # SQLAlchemy is imported when SQL is asked for (start-up stays light)
    from sqlalchemy.sql.elements import ColumnElement

Decision = Literal["pass", "fail", "na", "error"]
DECISIONS: tuple[Decision, ...] = ("pass", "fail", "na", "error")
#: the decisions that did not pass (``runs show --failed``, the grid's "failing" filter)
NOT_PASSED: tuple[Decision, ...] = ("fail", "error")

#: a run's pass threshold when it names none (the only place this number is written)
DEFAULT_PASS_THRESHOLD = 0.5
#: the statuses whose scores the mean counts (an invalid result as the 0 it was given)
SCORED_STATUSES = ("ok", "invalid")
#: the largest finite double: SQL tells a finite score by ``BETWEEN -LARGEST AND LARGEST`` (SQLite
#: has no isfinite; NaN is NULL there, and in PostgreSQL NaN is above every number)
LARGEST = sys.float_info.max


@dataclass(frozen=True)
class Clause:
    """One line of the rule: when every given condition holds, the result is ``decision``.

    ``statuses``: the result's status is one of these; ``verdict``: the judge's own verdict equals
    this; ``score``: "missing" (no score), "at_least" (score >= threshold) or "below"."""

    decision: Decision
    statuses: tuple[str, ...] = ()
    verdict: str | None = None
    score: Literal["missing", "at_least", "below"] | None = None


RULE: tuple[Clause, ...] = (
    Clause("error", statuses=("error",)),
    Clause("na", statuses=("skipped",)),
    Clause("fail", statuses=("invalid",)),
    Clause("pass", statuses=("ok",), verdict="PASS"),
    Clause("fail", statuses=("ok",), verdict="FAIL"),
    Clause("na", statuses=("ok",), score="missing"),
    Clause("pass", statuses=("ok",), score="at_least"),
    Clause("fail", statuses=("ok",), score="below"),
)
#: what a result no clause matches is (a status this rule does not know)
OTHERWISE: Decision = "error"


class ThresholdNotFinite(StudioError, ValueError):
    """A pass threshold that is not a finite number: nothing can be judged against it. A new run
    refuses one (engine/request.py); a run stored with one before says so instead of crashing."""


def check_threshold(threshold: float) -> float:
    """A threshold as a finite float (it is written into SQL as a literal)."""
    value = float(threshold)
    if not math.isfinite(value):
        raise ThresholdNotFinite(f"a pass threshold must be a finite number, not {threshold!r} (a run "
                                 "started with one cannot be judged: start it again with --pass-threshold)")
    return value


def _holds(clause: Clause, status: str, score: float | None, verdict: object, threshold: float) -> bool:
    if clause.statuses and status not in clause.statuses:
        return False
    if clause.verdict is not None and verdict != clause.verdict:
        return False
    if clause.score == "missing":
        return score is None or not math.isfinite(score)
    if clause.score == "at_least":
        return score is not None and score >= threshold
    if clause.score == "below":
        return score is not None and score < threshold
    return True


def decide(status: str, score: float | None, verdict: object, threshold: float) -> Decision:
    """The rule for one result: ``verdict`` is the judge's own (``details["verdict"]``) or None."""
    clause = deciding_clause(status, score, verdict, threshold)
    return OTHERWISE if clause is None else clause.decision


def deciding_clause(status: str, score: float | None, verdict: object, threshold: float) -> Clause | None:
    """The clause of ``RULE`` that decides the result (None: no clause holds, ``OTHERWISE``): what
    a report says of why (a fail by the judge's own verdict, or by a score below the threshold)."""
    for clause in RULE:
        if _holds(clause, status, score, verdict, threshold):
            return clause
    return None


def at_least_source(score: str, threshold: str) -> str:
    """The rule's at-least clause as source text over two expressions (Python's and JavaScript's
    alike), for code a platform runs without the studio (the promptfoo provider an export writes):
    the clause written out from here, not typed again beside it."""
    return f"({score}) >= ({threshold})"


def promptfoo_passes(value: object, threshold: float | None) -> bool:
    """promptfoo's rule for a number a ``javascript`` assertion returns (its handleJavascript): at
    or above the assertion's own threshold, above 0 without one; not a finite number never passes.
    A platform's rule, kept beside the studio's so no other module compares a score: the studio's
    own decision of the result is still ``decide``'s, at the run's threshold."""
    if type(value) not in (int, float) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return bool(value >= threshold) if threshold is not None else value > 0


def reaches(value: float, line: float) -> bool:
    """A figure at or above its line (a run's mean and ``--fail-under``): the rule's at-least
    clause, for a run's gate as for one result's score."""
    return value >= line


def scored_score(status: str, score: float | None) -> float | None:
    """The score a mean counts of a result: a finite score of a status the mean counts, else None."""
    if score is None or status not in SCORED_STATUSES or not math.isfinite(score):
        return None
    return score


def plain_decisions(scores: Sequence[float | None], threshold: float, finite: bool = False) -> dict[str, int]:
    """The decisions of ok results without a verdict whose scores are ``scores``, counted in C-level
    passes: the rule's score clauses read for a batch of plain scores (the hot path of a built-in
    check's run, a million rows). A None or a number that is not finite is no score (``finite``:
    the caller checked that every one is a finite float)."""
    missing = next(c.decision for c in RULE if c.score == "missing" and c.verdict is None)
    at_least = next(c.decision for c in RULE if c.score == "at_least" and c.verdict is None)
    below = next(c.decision for c in RULE if c.score == "below" and c.verdict is None)
    given = len(scores)
    if not finite and (set(map(type, scores)) != {float} or not all(map(math.isfinite, scores))):  # type: ignore[arg-type]
        scores = [s for s in scores if s is not None and math.isfinite(s)]
    counts: dict[str, int] = dict.fromkeys(DECISIONS, 0)
    counts[missing] += given - len(scores)
    reached = sum(map(float(threshold).__le__, scores))  # type: ignore[arg-type]  # finite floats
    counts[at_least] += reached
    counts[below] += len(scores) - reached
    return counts


def verdict_in(details: object) -> JsonValue:
    """The judge's own verdict kept in a result's details (None when it gave none)."""
    return details.get("verdict") if isinstance(details, Mapping) else None


def decide_result(result: Mapping[str, JsonValue], threshold: float) -> Decision:
    """The rule for a stored result or an outcome's fields (``status``, ``score``, ``details``)."""
    return decide(str(result.get("status")), result.get("score"), verdict_in(result.get("details")), threshold)


class _Decided(Protocol):
    """What the rule reads of an ``Outcome`` (result.py, which imports this module)."""

    @property
    def status(self) -> str: ...
    @property
    def score(self) -> float | None: ...
    @property
    def details(self) -> JsonObject: ...


def decide_outcome(outcome: _Decided, threshold: float) -> Decision:
    """The rule for an ``Outcome`` (what a scorer returned)."""
    return decide(outcome.status, outcome.score, verdict_in(outcome.details), threshold)


def word(status: str, decision: Decision) -> str:
    """What a reviewer reads first: PASS or FAIL for an ok result (NA without a score), else the
    status itself (error, invalid, skipped), whose decision the status already says."""
    if status != "ok":
        return status
    return {"pass": "PASS", "fail": "FAIL"}.get(decision, "NA")


def run_threshold(settings: Mapping[str, JsonValue] | None, aggregates: Mapping[str, JsonValue] | None = None) -> float:
    """A run's pass threshold: its settings' (what it was started with) first, since its stored
    aggregates may be older, then the aggregates', else ``DEFAULT_PASS_THRESHOLD``."""
    for source in (settings or {}, aggregates or {}):
        value = source.get("pass_threshold")
        if value is not None:
            return float(value)
    return DEFAULT_PASS_THRESHOLD


# --- the same rule in SQL ------------------------------------------------------------------------
def decision_sql(status: ColumnElement[str], score: ColumnElement[float], verdict: ColumnElement[str],
                 threshold: float) -> ColumnElement[str]:
    """``RULE`` as an SQL ``CASE`` over the given column expressions, giving the decision's name."""
    from sqlalchemy import and_, case, literal, not_, or_, true

    limit = check_threshold(threshold)
    whens = []
    for clause in RULE:
        parts: list[ColumnElement[bool]] = []
        if clause.statuses:
            parts.append(status.in_(clause.statuses))
        if clause.verdict is not None:
            parts.append(verdict == clause.verdict)
        if clause.score == "missing":
            parts.append(or_(score.is_(None), not_(score.between(literal(-LARGEST), literal(LARGEST)))))
        elif clause.score == "at_least":
            parts.append(score >= literal(limit))
        elif clause.score == "below":
            parts.append(score < literal(limit))
        whens.append((and_(true(), *parts), literal(clause.decision)))
    return case(*whens, else_=literal(OTHERWISE))


@lru_cache(maxsize=256)
def decision_sql_text(status: str = "status", score: str = "score",
                      details: str = "details", threshold: float = DEFAULT_PASS_THRESHOLD) -> str:
    """``decision_sql`` as SQLite text over column names (the grid's and the reports' raw SQL);
    ``details`` is the column holding the result's JSON details (the verdict is read from it)."""
    from sqlalchemy import Float, String, literal_column
    from sqlalchemy.dialects import sqlite

    expression = decision_sql(literal_column(status, String()), literal_column(score, Float()),
                              literal_column(f"json_extract({details}, '$.verdict')", String()),
                              threshold)
    return str(expression.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))


def scored_sql(status: str = "status", score: str = "score") -> str:
    """``scored_score`` in SQL over column names: the score a mean counts, else NULL."""
    statuses = ", ".join(f"'{s}'" for s in SCORED_STATUSES)
    return (f"CASE WHEN {status} IN ({statuses}) AND {score} BETWEEN {-LARGEST!r} AND {LARGEST!r}"
            f" THEN {score} END")


@dataclass(frozen=True)
class RuleSql:
    """The rule settled at one threshold as the SQL a tally's query applies over one set of its
    columns (``status{suffix}``, ``score{suffix}``, ``details{suffix}``: a suite's one-pass query
    names each grader's columns by its slot): each row's decision (``decision_sql_text``) and the
    score a mean counts (``scored_sql``). Written before the query is, so a query never stops
    midway to ask for the rule."""

    threshold: float
    suffix: str
    decision: str
    scored: str


def rule_sql(threshold: float, suffix: str = "") -> RuleSql:
    """The ``RuleSql`` at ``threshold`` over the columns named with ``suffix``
    (``ThresholdNotFinite`` for a threshold that is not a finite number)."""
    status, score = f"status{suffix}", f"score{suffix}"
    return RuleSql(threshold, suffix, decision_sql_text(status, score, f"details{suffix}", threshold),
                   scored_sql(status, score))


@dataclass(frozen=True)
class SettledRule:
    """The rule settled for one reading of a run, before any of its queries: each grader's
    ``RuleSql`` at its threshold over its columns, and the run's own rows' at the threshold they
    are counted at."""

    graders: tuple[RuleSql, ...]
    overall: RuleSql


def settle(graders: Sequence[tuple[float, str]], overall: float) -> SettledRule:
    """The ``SettledRule`` of graders given as (threshold, column suffix), and of the run's rows at
    ``overall`` (``ThresholdNotFinite`` for any threshold that is not a finite number: a run
    stored with one cannot be judged)."""
    return SettledRule(tuple(rule_sql(threshold, suffix) for threshold, suffix in graders), rule_sql(overall))


def decision_in_sql(decisions: tuple[str, ...], status: str = "status", score: str = "score",
                    details: str = "details", threshold: float = DEFAULT_PASS_THRESHOLD) -> str:
    """An SQL condition: the result's decision is one of ``decisions`` (``decision_sql_text``'s columns)."""
    names = ", ".join(f"'{d}'" for d in decisions if d in DECISIONS)
    return f"({decision_sql_text(status, score, details, threshold)} IN ({names}))"
