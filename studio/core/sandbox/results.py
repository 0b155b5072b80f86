"""The platforms' rules for what a grader returned, turning a worker's raw entry into an Outcome.

Numbers only: bool, NaN/inf and text are invalid (score 0, payload kept - MKA1's rule); MKA1 dicts
keep their finite ``scores`` and the ``judge`` object; Letta GradeResult and promptfoo pass/score/
reason dicts have their own shapes. A sandbox failure (limit, crash) is an ``error``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.models import Outcome, valid_number
from studio.core.scoring import ResultRowValues
from studio.core.store.runs import ok_row, outcome_values, scored_rows, scores_prefix

# status codes of a worker entry [index, status, value, ...]
OK, RAISED, UNSERIALISABLE, MEMORY, TOO_LARGE, LIMIT, NOT_LOADED = range(7)

_NUMBER_TYPES = (int, float)


def _describe(value: JsonValue) -> str:
    if isinstance(value, bool):
        return f"returned a bool ({value}); return a number such as 1.0 or 0.0"
    if isinstance(value, float) and not math.isfinite(value):
        return f"returned a non-finite number ({value})"
    if isinstance(value, int) and not valid_number(value):
        return "returned an integer too large for a score (beyond a float's range)"
    if value is None:
        return "returned None instead of a number"
    return f"returned {type(value).__name__} instead of a number"


def _finite_scores(raw: JsonValue) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if valid_number(v)}


def _number(value: JsonValue, key: str) -> Outcome:
    if type(value) in _NUMBER_TYPES and valid_number(value):
        score = float(value)
        return Outcome.scored(score, {key: score})
    return Outcome.invalid(_describe(value), raw=_jsonable(value))


def _jsonable(value: JsonValue) -> JsonValue:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _mka1(value: JsonValue, key: str) -> Outcome:
    if not isinstance(value, dict):
        return _number(value, key)
    scores = _finite_scores(value.get("scores"))
    if not scores:
        return Outcome.invalid("returned a dict without any finite numeric score in 'scores'", raw=_sanitise(value))
    score = scores.get(key, next(iter(scores.values())))
    details: JsonObject = {}
    if "judge" in value:
        details["judge"] = _sanitise(value["judge"])
    return Outcome(status="ok", score=score, scores=scores, details=details)


def _letta(value: JsonValue, key: str) -> Outcome:
    if isinstance(value, dict) and value.get("__grade_result__"):
        score = value.get("score")
        if not valid_number(score):
            return Outcome.invalid(f"GradeResult.score is not a finite number: {_describe(score)}", raw=_sanitise(value))
        if not 0.0 <= float(score) <= 1.0:
            return Outcome.invalid(f"GradeResult.score {score} is outside 0.0..1.0", raw=_sanitise(value))
        rationale = value.get("rationale")
        metadata = value.get("metadata")
        return Outcome(
            status="ok",
            score=float(score),
            scores={key: float(score)},
            rationale=None if rationale is None else str(rationale),
            details={"metadata": _sanitise(metadata)} if metadata else {},
        )
    return _number(value, key)


def _promptfoo(value: JsonValue, key: str) -> Outcome:
    if isinstance(value, bool):
        verdict = 1.0 if value else 0.0
        return Outcome(status="ok", score=verdict, scores={key: verdict}, details={"pass": value})
    if isinstance(value, dict):
        passed = value.get("pass")
        if passed is not None and not isinstance(passed, bool):
            return Outcome.invalid("'pass' must be true or false", raw=_sanitise(value))
        score = value.get("score")
        if score is None and passed is None:
            return Outcome.invalid("returned a dict without 'pass' or 'score'", raw=_sanitise(value))
        if score is not None and not valid_number(score):
            return Outcome.invalid(f"'score' is not a finite number: {_describe(score)}", raw=_sanitise(value))
        final = float(score) if score is not None else (1.0 if passed else 0.0)
        reason = value.get("reason")
        details: JsonObject = {}
        if passed is not None:
            details["pass"] = passed
        return Outcome(
            status="ok",
            score=final,
            scores={key: final},
            rationale=None if reason is None else str(reason),
            details=details,
        )
    return _number(value, key)


_BY_CONTRACT = {"adaptive": _number, "mka1_sample": _mka1, "letta": _letta, "promptfoo": _promptfoo}


def _sanitise(value: JsonValue) -> JsonValue:
    """JSON-safe copy for storage (NaN/inf as text)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _sanitise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sanitise(v) for v in value]
    return value


def failure_outcome(entry: JsonArray, contract: str, memory_mb: int, output_kib: int) -> Outcome:
    """An entry whose status is not OK."""
    status = entry[1]
    if status == RAISED:
        details = {"exception": entry[3]} if len(entry) > 3 else {}
        if len(entry) > 4 and entry[4]:
            details["line"] = entry[4]
        error = f"grader raised {entry[2]}"
        if contract.startswith("mka1"):  # MKA1: exceptions are invalid results scored 0
            outcome = Outcome.invalid(error, raw={"error": entry[2]})
        else:
            outcome = Outcome.failure(error)
        outcome.details.update(details)
        return outcome
    if status == UNSERIALISABLE:
        return Outcome.invalid(f"returned {entry[3]} instead of a number", raw=entry[2])
    if status == MEMORY:
        return Outcome.failure(f"memory limit ({memory_mb} MB) exceeded")
    if status == TOO_LARGE:
        return Outcome.failure(
            f"output size limit ({output_kib} KiB) exceeded: the result was {entry[3]} bytes", raw=entry[2]
        )
    if status in (LIMIT, NOT_LOADED):
        return Outcome.failure(str(entry[2]))
    return Outcome.failure(f"unknown worker status {status!r}")


def to_outcome(
    entry: JsonArray, contract: str, key: str, memory_mb: int, output_kib: int, duration_ms: float = 0.0
) -> Outcome:
    if entry[1] == OK and len(entry) == 3 and contract == "adaptive" and type(entry[2]) is float and math.isfinite(entry[2]):
        # the hot path of a run: one plain float, nothing printed
        return Outcome.scored(entry[2], {key: entry[2]}, duration_ms=duration_ms)
    if entry[1] == OK:
        outcome = _BY_CONTRACT.get(contract, _number)(entry[2], key)
    else:
        outcome = failure_outcome(entry, contract, memory_mb, output_kib)
    if len(entry) > 3 and isinstance(entry[-1], dict) and "printed" in entry[-1]:
        outcome.details = {**outcome.details, "printed": entry[-1]["printed"]}
    outcome.duration_ms = duration_ms
    return outcome


def batch_outcomes(
    value: JsonValue, sample_ids: list[str], key: str
) -> tuple[list[Outcome], dict[str, float]]:
    """MKA1 ``grade_batch``: {metrics, samples: [{sample_id, scores, judge, extracted_output}]}."""
    if not isinstance(value, dict) or not ({"metrics", "samples"} & value.keys()):
        bad = Outcome.invalid("grade_batch must return a dict with 'metrics' and/or 'samples'", raw=_sanitise(value))
        return [bad.model_copy() for _ in sample_ids], {}
    metrics = _finite_scores(value.get("metrics"))
    updates: dict[str, JsonObject] = {}
    raw_updates = value.get("samples") or []
    if isinstance(raw_updates, list):
        for update in raw_updates:
            if isinstance(update, dict) and update.get("sample_id") is not None:
                updates[str(update["sample_id"])] = update
    outcomes: list[Outcome] = []
    for sid in sample_ids:
        update = updates.get(sid)
        if update is None:
            outcomes.append(Outcome(status="ok", details={"batch": True}))
            continue
        scores = _finite_scores(update.get("scores"))
        details: JsonObject = {"batch": True}
        if "judge" in update:
            details["judge"] = _sanitise(update["judge"])
        if "extracted_output" in update:
            details["extracted_output"] = update["extracted_output"]
        if update.get("scores") and not scores:
            outcomes.append(Outcome.invalid("sample update has no finite numeric score", raw=_sanitise(update)))
            continue
        score = scores.get(key, next(iter(scores.values()))) if scores else None
        outcomes.append(Outcome(status="ok", score=score, scores=scores, details=details))
    return outcomes, metrics


def result_rows(
    entries: Sequence[JsonArray | float], batch: Sequence[tuple[int, str, str]], run_id: int, contract: str,
    key: str, memory_mb: int, output_kib: int, duration_ms: float = 0.0,
) -> list[ResultRowValues]:
    """The store's rows (``outcome_values`` form) for a batch's checked entries, in batch order.

    A bare float (a plain finite score, ``GraderSession.run_scores``) or an entry that is one
    finite float, nothing printed, becomes its row directly (every contract scores a plain float
    the same way: ``Outcome.scored(v, {key: v})``); any other entry goes through ``to_outcome``, so
    the platforms' rules and the pydantic model stay the boundary for everything but the hot path.
    """
    prefix = scores_prefix(key)

    def other(row: tuple[int, str, str], entry: JsonValue) -> ResultRowValues:
        # what scored_rows does not take whole: a non-finite float (wire.check_floats hands over
        # none) and every entry; an entry of one finite float, nothing printed, is still a plain row
        if type(entry) is float:
            entry = [row[0], OK, entry]
        if len(entry) == 3 and entry[1] == OK:
            value = entry[2]
            if type(value) is float and value - value == 0.0:  # finite: inf - inf and nan - nan are nan
                return ok_row(run_id, row[0], row[1], prefix, value, duration_ms)
        return outcome_values(run_id, row[0], row[1],
                              to_outcome(entry, contract, key, memory_mb, output_kib, duration_ms))

    # a batch of plain scores (the usual one) is made a batch at a time, its texts once a score
    return scored_rows(run_id, batch, entries, key, duration_ms, other)
