"""A run's numbers declared once: the result row and the tally's folds, from which the SQL and the Python are made.

The result row (``ResultRow``: a ``results`` row; ``GraderRow``: a suite's per-grader row) is one
declaration of its columns, their order and types: the tables' columns (tables.py), the writers'
inserts and bound values (runs.py), the positions the engine reads a written row at (``AT``) and the
typed readers (``ResultRow._make``) are made from it, where each used to spell the fifteen fields
out with index constants of its own.

Why: a run's sums were written twice, as SQL (``run_graders.tally_sql``: nineteen aggregates in a
fixed order, read back by position) and as Python (``engine/written_tally.py``: the same sums kept
as the writer writes), and the two copies were held equal only by a test; a fold added to one and
not the other would have been caught late, if at all. Here each fold (a count by status or by
decision, n, the sum, the sum of squares, the minimum and maximum of the scored scores, the tokens,
the time) is one line of ``FOLDS``; ``fold_sql`` makes the SELECT's aggregates from it,
``Tally.of_values`` reads them back by the same list, and ``Folding`` (the streaming accumulator)
adds a batch up by the same list. tests/core/store/test_ledger.py holds the two equal on random
rows, non-finite scores and NA included, on SQLite and PostgreSQL.

What a fold reads of a row (its ``over``):

* ``row``: every row of the grader;
* ``status``: the row's status (ok, error, invalid, skipped);
* ``decision``: the pass rule's decision (models/pass_rule.py: its ``decide`` and its SQL);
* ``score``: the *scored* score: a finite score of a row whose status the mean counts
  (``pass_rule.scored_score``; a score that is not a finite number is no score, as NA is);
* a cost column: ``prompt_tokens``, ``completion_tokens``, ``cached_tokens``, ``cached``, ``duration_ms``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import chain
from operator import mul
from typing import Literal, NamedTuple, cast, get_type_hints

from pydantic import BaseModel

from studio.core.models.pass_rule import DECISIONS


class ResultRow(NamedTuple):
    """One ``results`` row as the writer binds it: the run, the sample, then what its grader said
    (``OUTCOME``). A plain tuple in this order is a ``ResultRow``'s values (the write path builds
    tuples: a NamedTuple's constructor costs a run of a million rows a second)."""

    run_id: int
    sample_idx: int
    sample_id: str
    status: str
    score: float | None
    scores: str | None  # JSON text
    rationale: str | None
    details: str | None  # JSON text
    error: str | None
    raw: str | None  # JSON text
    duration_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached: int  # 0/1
    cached_tokens: int


class GraderRow(NamedTuple):
    """One ``grader_results`` row (a suite run's grader result that the sample row's ``scores`` does
    not say whole): the run, the grader's slot, the sample, then the same ``OUTCOME`` columns at the
    same places as a ``ResultRow``'s (the engine reads either kind of row at ``AT``)."""

    run_id: int
    slot: int
    sample_idx: int
    status: str
    score: float | None
    scores: str | None
    rationale: str | None
    details: str | None
    error: str | None
    raw: str | None
    duration_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached: int
    cached_tokens: int


#: the columns of what a grader said, shared by both rows, in order
OUTCOME: tuple[str, ...] = ResultRow._fields[3:]
assert GraderRow._fields[3:] == OUTCOME  # the engine reads both rows at the same places
#: a column's place in a written row (either kind, from ``status`` on; ``sample_idx`` of a ResultRow)
AT: dict[str, int] = {name: n for n, name in enumerate(ResultRow._fields)}
#: the columns a ``results`` insert names after ``run_id``; a ``grader_results`` insert's after its key
RESULT_COLUMNS: tuple[str, ...] = ResultRow._fields[1:]
GRADER_COLUMNS: tuple[str, ...] = OUTCOME
#: each column's SQL type where it is not its Python type's (SQLAlchemy's name): keys and status are
#: short strings, JSON and texts are Text
_SQL_TYPE = {"sample_id": "String", "status": "String"}
#: the defaults the tables give a column the writer leaves out (a plain row: ``runs._PLAIN_COLUMNS``)
DEFAULTS = {"duration_ms": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "cached": 0, "cached_tokens": 0}


def column_specs(row: type[tuple[object, ...]], skip: int) -> list[tuple[str, str, bool, float | None]]:
    """(name, SQLAlchemy type name, nullable, default) of each of ``row``'s columns after the first
    ``skip`` (the key columns its table declares itself): what tables.py builds the table from."""
    hints = get_type_hints(row)
    out = []
    for name in row._fields[skip:]:  # type: ignore[attr-defined]
        hint = hints[name]
        nullable = type(None) in getattr(hint, "__args__", ())
        base = next((t for t in getattr(hint, "__args__", (hint,)) if t is not type(None)), hint)
        kind = _SQL_TYPE.get(name) or {int: "Integer", float: "Float", str: "Text"}[base]
        out.append((name, kind, nullable, DEFAULTS.get(name)))
    return out


#: the statuses a result row can have (models/result ``OutcomeStatus``), counted one by one
STATUSES = ("ok", "error", "invalid", "skipped")
#: the cost columns a tally adds up, as the result row names them
COSTS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cached", "duration_ms")

Op = Literal["count", "sum", "sumsq", "min", "max"]


@dataclass(frozen=True)
class Fold:
    """One figure of a tally: ``op`` over what the row gives as ``over``, counting only the rows
    whose ``over`` equals ``equals`` when one is given. ``name``: the ``Tally`` field it fills
    (``group.key`` for a count by status or decision)."""

    name: str
    op: Op
    over: str
    equals: str | None = None
    #: a sum of integers the SQL adds as doubles (token sums stored before counts were bounded
    #: overflowed SQL's integer sum)
    as_double: bool = False
    #: a score's sum or sum of squares in two parts (``Split``): ``high`` is the part of the huge
    #: scores, scaled down so that no sum of them overflows
    high: bool = False


FOLDS: tuple[Fold, ...] = (
    Fold("total", "count", "row"),
    *(Fold(f"statuses.{s}", "count", "status", s) for s in STATUSES),
    *(Fold(f"decisions.{d}", "count", "decision", d) for d in DECISIONS),
    Fold("n", "count", "score"),
    Fold("score_sum", "sum", "score"),
    Fold("score_sum_high", "sum", "score", high=True),
    Fold("score_sumsq", "sumsq", "score"),
    Fold("score_sumsq_high", "sumsq", "score", high=True),
    Fold("score_min", "min", "score"),
    Fold("score_max", "max", "score"),
    Fold("prompt_tokens", "sum", "prompt_tokens", as_double=True),
    Fold("completion_tokens", "sum", "completion_tokens", as_double=True),
    Fold("cached_tokens", "sum", "cached_tokens", as_double=True),
    Fold("cached", "sum", "cached"),
    Fold("duration_ms", "sum", "duration_ms"),
)


class Tally(BaseModel):
    """The sums one grader's results add up to (``FOLDS``): what engine/summary.py turns into the
    run's one summary. Counts by status and by the pass rule's decision; sums over scored results
    (status ok or invalid, with a finite score)."""

    total: int = 0
    statuses: dict[str, int]
    decisions: dict[str, int]
    n: int = 0
    #: the scored scores' sum and sum of squares, each in two parts that no run's rows overflow
    #: (``SPLITS``): the terms of the scores under the split's limit as they are (``score_sum``,
    #: ``score_sumsq``), the huge scores' terms scaled down (``..._high``, 0 without such a score);
    #: ``sum_of_scores`` and ``sum_of_squares`` read them whole
    score_sum: float = 0.0
    score_sum_high: float = 0.0
    score_sumsq: float = 0.0
    score_sumsq_high: float = 0.0
    score_min: float | None = None
    score_max: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cached: int = 0
    duration_ms: float = 0.0

    @classmethod
    def of_values(cls, values: Sequence[Aggregate]) -> Tally:
        """The tally from one row of ``fold_sql``'s aggregates (in ``FOLDS``' order; SQL's NULL
        sum of no row is 0, its NULL minimum of none stays None)."""
        fields: dict[str, float | None] = {}
        #: the counts by status and by decision (a fold named ``group.key``)
        groups: dict[str, dict[str, float | None]] = {"statuses": {}, "decisions": {}}
        for fold, value in zip(FOLDS, values, strict=True):
            group, _, key = fold.name.partition(".")
            if key:
                groups[group][key] = _typed(fold, value)
            else:
                fields[group] = _typed(fold, value)
        return cls.model_validate({**fields, **groups})

    def sum_of_scores(self) -> float:
        """The scored scores' sum (±inf beyond the largest double)."""
        return SPLITS["sum"].whole(self.score_sum, self.score_sum_high)

    def sum_of_squares(self) -> float:
        """The scored scores' sum of squares (inf beyond the largest double)."""
        return SPLITS["sumsq"].whole(self.score_sumsq, self.score_sumsq_high)


#: each Tally field's type: an int field of a sum stored as a double (tokens) comes back an int
_INTEGER_FIELDS = {"total", "n", "prompt_tokens", "completion_tokens", "cached_tokens", "cached"}


#: one aggregate as SQL gives it (PostgreSQL's SUM of integers is a numeric: a Decimal) or as
#: ``Folding`` keeps it (an int count, a float sum, None for the minimum of no score)
Aggregate = float | Decimal | None


def _typed(fold: Fold, value: Aggregate) -> float | None:
    if fold.op in ("min", "max"):
        return None if value is None else float(value)
    if value is None:
        value = 0
    if fold.op == "count" or fold.name.split(".")[0] in _INTEGER_FIELDS:
        return int(value)
    return float(value)


#: a score whose square the SQL tally takes as 0 (``fold_sql``)
_TINY = 1e-150


@dataclass(frozen=True)
class Split:
    """A sum over the scored scores kept as two sums that never overflow a double, whatever a
    teammate's scores: PostgreSQL fails a query whose float sum or product overflows ("value out of
    range: overflow"), where SQLite and Python give inf, and an inf sum cannot be taken back (two
    scores of 1e308 have a mean of 1e308). The terms (``power``: 1 the score, 2 its square) of the
    scores under ``limit`` in magnitude are added as they are (every ordinary run: the sum is the
    plain sum, and the other part 0); the others' after scaling the score by 2**-``scale`` (exact: a
    power of two). Each term of either part is under 2**(1023 - 63), so no count of rows a table can
    hold adds up past a double."""

    limit: float
    scale: int
    power: int

    @property
    def factor(self) -> float:
        return math.ldexp(1.0, -self.scale)

    def term(self, score: float) -> float:
        """A huge score's term in the ``high`` part."""
        scaled = score * self.factor
        return scaled if self.power == 1 else scaled * scaled

    def whole(self, low: float, high: float) -> float:
        """The sum of both parts (±inf beyond the largest double)."""
        if not high:
            return low
        try:
            return low + math.ldexp(high, self.scale * self.power)
        except OverflowError:
            return math.copysign(math.inf, high)

    def sql(self, column: str, high: bool) -> str:
        """The part as an SQL sum over ``column`` (NULL: no score). A square under ``_TINY`` counts
        0: PostgreSQL fails a product that rounds to 0 ("underflow") and a double keeps nothing of it
        beside any other square."""
        if high:
            scaled = f"({column} * {self.factor!r})"
            term = scaled if self.power == 1 else f"{scaled} * {scaled}"
            return f"sum(CASE WHEN abs({column}) >= {self.limit!r} THEN {term} END)"
        tiny = f"WHEN abs({column}) < {_TINY!r} THEN 0.0 " if self.power == 2 else ""
        term = column if self.power == 1 else f"{column} * {column}"
        return f"sum(CASE {tiny}WHEN abs({column}) < {self.limit!r} THEN {term} END)"


#: the two split sums of a tally: the scores' (huge: from 2**960, scaled by 2**-64) and their
#: squares' (huge: from 2**480, whose square passes 2**960; scaled by 2**-544 before squaring)
SPLITS = {"sum": Split(limit=2.0 ** 960, scale=64, power=1),
          "sumsq": Split(limit=2.0 ** 480, scale=544, power=2)}


# --- the folds as SQL -----------------------------------------------------------------------------
def fold_sql(columns: Mapping[str, str], present: str | None = None) -> str:
    """``FOLDS`` as SQL aggregates over a subquery's ``columns`` (``over`` -> column name: "status",
    "decision", "score" (already the scored score), and each of ``COSTS``); ``present``: a column
    that is NULL where a row is not this grader's (a suite's one-pass tally), which then counts
    nowhere. Counts as ``count(CASE ...)``: PostgreSQL has no sum of booleans."""
    parts = []
    for fold in FOLDS:
        if fold.over == "row":
            parts.append(f"count({present or '*'})")
            continue
        column = columns[fold.over]
        if fold.op == "count":
            parts.append(f"count({column})" if fold.equals is None
                         else f"count(CASE WHEN {column} = '{fold.equals}' THEN 1 END)")
        elif fold.over == "score" and fold.op in SPLITS:
            parts.append(SPLITS[fold.op].sql(column, fold.high))
        elif fold.op == "sum" and fold.as_double:
            parts.append(f"sum(CAST({column} AS DOUBLE PRECISION))")
        else:
            parts.append(f"{fold.op}({column})")
    return ", ".join(parts)


# --- the folds as a streaming accumulator ---------------------------------------------------------
#: integers below this add up exactly as floats
_EXACT_FLOAT_INT = 2.0 ** 53


def exact_parts(values: Sequence[float]) -> tuple[float, ...]:
    """``values``' sum as floats whose sum is it (to 2**-106 of it): whatever the batches a run's
    rows came in, the total is the same (a run's mean does not depend on its lane's batch sizes)."""
    total = math.fsum(values)
    rest = math.fsum(chain(values, (-total,)))
    return (total, rest) if rest else (total,)


def sum_parts(values: Sequence[float]) -> tuple[float, ...]:
    """``exact_parts``, with whole numbers small enough to add exactly as they are (a check's 0 and 1)."""
    if not values:
        return ()
    largest = max(map(abs, values))
    if largest * len(values) < _EXACT_FLOAT_INT and all(map(float.is_integer, values)):
        return (sum(values),)
    return exact_parts(values)


class Total:
    """A running sum kept as a few floats (``exact_parts``), read correctly rounded."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[float] = []

    def add(self, parts: Iterable[float]) -> None:
        self.parts.extend(parts)
        if len(self.parts) > 256:
            self.parts = list(exact_parts(self.parts))

    def value(self) -> float:
        return math.fsum(self.parts)


@dataclass
class Batch:
    """Rows of one grader reduced to what the folds read: how many, the counts by ``status`` and by
    ``decision``, the scored scores (finite floats) and each cost column's sum (``COSTS``)."""

    rows: int
    counts: dict[str, Mapping[str, int]]
    scores: Sequence[float] = ()
    costs: Mapping[str, float] = field(default_factory=dict)


class Folding:
    """``FOLDS`` kept as batches arrive (``add``), read as a ``Tally`` (``tally``): the same figures
    ``fold_sql`` gives over the same rows. Float sums are kept exact (``Total``), so they do not
    depend on the batches the rows came in; SQL adds in its scan order (equal to a relative 1e-12)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        # float sums of scores kept exact (``Total``); counts and cost sums as plain numbers
        self.values: list[float | Total | None] = [None if f.op in ("min", "max") else Total() if f.over == "score" and f.op != "count"
                                  else 0 for f in FOLDS]

    def add(self, batch: Batch) -> tuple[float, ...]:
        """Adds ``batch`` up; returns its scores' sum as ``exact_parts`` (() without scores; a
        batch with a score from 2**960 on: the low part's, see ``Split``, and the whole of the high
        part's, which may be inf)."""
        scores = batch.scores
        parts: tuple[float, ...] = ()
        figures: dict[str, float] = {"count": len(scores)}
        #: each split sum's parts (``SPLITS``) of the batch, by (op, high)
        sums: dict[tuple[str, bool], tuple[float, ...]] = {}
        if scores:
            low, high = min(scores), max(scores)
            largest = max(-low, high)
            nothing: tuple[float, ...] = ()
            if largest * largest * len(scores) < _EXACT_FLOAT_INT and all(map(float.is_integer, scores)):
                parts = (sum(scores),)  # whole numbers (a check's 0 and 1): exact as they are
                squares: tuple[float, ...] = (sum(map(mul, scores, scores)),)
                sums.update({("sum", True): nothing, ("sumsq", True): nothing})
            elif largest < SPLITS["sumsq"].limit:  # no huge score: every term in the low parts
                parts, squares = exact_parts(scores), exact_parts(list(map(mul, scores, scores)))
                sums.update({("sum", True): nothing, ("sumsq", True): nothing})
            else:
                parts, squares = self._split(scores, sums)
            sums.update({("sum", False): parts, ("sumsq", False): squares})
            figures.update(min=low, max=high)
            if sums["sum", True]:
                parts = (*parts, SPLITS["sum"].whole(0.0, math.fsum(sums["sum", True])))
        # each fold's value is of the kind ``__init__`` gave it: a Total for a split sum of scores,
        # None or a float for a minimum or maximum, else a number (a count or a cost's sum)
        values, counts, costs = self.values, batch.counts, batch.costs
        for n, fold in enumerate(FOLDS):
            over, op = fold.over, fold.op
            if over == "row":
                values[n] = cast(float, values[n]) + batch.rows
            elif over == "score":
                if op == "count":
                    values[n] = cast(float, values[n]) + figures["count"]
                elif scores:
                    if op in SPLITS:
                        cast(Total, values[n]).add(sums[op, fold.high])
                    else:
                        found, now = figures[op], cast("float | None", values[n])
                        values[n] = found if now is None else (min if op == "min" else max)(now, found)
            elif op == "count":
                values[n] = cast(float, values[n]) + counts.get(over, {}).get(fold.equals or "", 0)
            else:  # a cost column's sum
                values[n] = cast(float, values[n]) + costs.get(over, 0)
        return parts

    @staticmethod
    def _split(scores: Sequence[float], sums: dict[tuple[str, bool], tuple[float, ...]]
               ) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """A batch with a huge score: each split sum's high parts (``Split``) into ``sums``; returns
        the low parts (the scores' and the squares')."""
        low_parts = []
        for op, split in SPLITS.items():
            limit = split.limit
            terms = [s if split.power == 1 else s * s for s in scores if abs(s) < limit]
            sums[op, True] = exact_parts([split.term(s) for s in scores if abs(s) >= limit])
            low_parts.append(exact_parts(terms))
        return low_parts[0], low_parts[1]

    def tally(self) -> Tally:
        """The tally so far (sums read correctly rounded)."""
        return Tally.of_values([v.value() if isinstance(v, Total) else v for v in self.values])
