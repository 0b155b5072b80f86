"""OpenAI's own results beside a studio run of the same eval (``runs compare-external RUN FILE``).

A team leaving OpenAI's Evals platform holds the output items the API returned for a run
(``openai.types.evals.runs.OutputItemListResponse``: ``datasource_item_id``, ``datasource_item``,
``results: [{name, passed, score}]``), as JSONL, one item a line, or as the API's list page
(``{"object": "list", "data": [...]}``). Each item is matched to a sample of the studio run (by its
item's fields, else by its position in the data source) and each result to the suite's grader of
the same criterion (by the key the import derived from its name); per criterion the two pass rates,
the samples on which they agree, and the scores' largest difference are reported, and per sample
both sides are listed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.json_types import JsonArray, JsonObject
from studio.core.models.pass_rule import decide_outcome, run_threshold

from ._base import PlatformError
from ._fields import read_text, slug

if TYPE_CHECKING:
    from studio.core.store.library import Library


@dataclass
class Side:
    passed: bool | None
    score: float | None
    status: str = "ok"


@dataclass
class CriterionComparison:
    key: str
    ours: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "error": 0})
    theirs: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "error": 0})
    agree: int = 0
    both: int = 0
    max_score_gap: float | None = None

    def to_json(self) -> JsonObject:
        return {"criterion": self.key, "studio": self.ours, "openai": self.theirs, "agree": self.agree,
                "compared": self.both, "max_score_gap": self.max_score_gap}


@dataclass
class Comparison:
    criteria: dict[str, CriterionComparison]
    samples: list[JsonObject]
    unmatched_items: list[int]
    unknown_criteria: list[str]

    def to_json(self) -> JsonObject:
        return {"criteria": [c.to_json() for c in self.criteria.values()], "samples": self.samples,
                "unmatched_items": self.unmatched_items, "unknown_criteria": self.unknown_criteria}


def read_output_items(path: Path) -> list[JsonObject]:
    """Output items from JSONL (one a line) or from one JSON list page; a bad line names its number."""
    text = read_text(path)
    items: JsonArray = []
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("data"), list):
        items = whole["data"]
    elif isinstance(whole, list):
        items = whole
    elif isinstance(whole, dict):
        items = [whole]
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise PlatformError(f"{path}:{n}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    for n, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("results"), list):
            raise PlatformError(f"{path}: output item {n} has no results list (is this OpenAI's output items file?)")
    return items


def _their_side(result: JsonObject) -> Side:
    score = result.get("score")
    passed = result.get("passed")
    number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    if number is not None and not math.isfinite(number):
        number = None
    return Side(passed if isinstance(passed, bool) else None, number, "ok" if isinstance(passed, bool) else "error")


def compare_external(library: Library, run_id: int, path: Path) -> Comparison:
    info = library.runs.get(run_id)
    if info.suite is None:
        raise PlatformError(f"run {run_id} graded one grader; compare an imported eval's suite run")
    slots = library.runs.slots(run_id)
    default = run_threshold(info.settings, info.aggregates)
    keys = {slot.slot: slot.grader_key for slot in slots}
    thresholds = {slot.slot: (slot.threshold if slot.threshold is not None else default) for slot in slots}
    by_key = {key: slot for slot, key in keys.items()}
    outcomes = library.runs.grader_outcomes(run_id)
    dataset = library.datasets.get(info.dataset)
    samples = list(library.datasets.iter_samples(dataset.id))
    by_item = {json.dumps(s.fields.get("item"), sort_keys=True): idx for idx, s in enumerate(samples)
               if isinstance(s.fields, dict) and "item" in s.fields}
    criteria = {key: CriterionComparison(key) for key in keys.values()}
    rows: list[JsonObject] = []
    unmatched: list[int] = []
    unknown: set[str] = set()
    for n, item in enumerate(read_output_items(path)):
        idx = by_item.get(json.dumps(item.get("datasource_item"), sort_keys=True))
        if idx is None:
            position = item.get("datasource_item_id")
            idx = position if isinstance(position, int) and 0 <= position < len(samples) else None
        if idx is None:
            unmatched.append(n)
            continue
        line: JsonObject = {"sample": samples[idx].id, "index": idx, "criteria": {}}
        for result in item["results"]:
            key = slug(str(result.get("name", "")), "criterion")
            if key not in by_key:
                unknown.add(str(result.get("name")))
                continue
            slot = by_key[key]
            theirs = _their_side(result)
            outcome = outcomes.get(idx, {}).get(slot)
            if outcome is None:
                ours = Side(None, None, "missing")
            else:
                decision = decide_outcome(outcome, thresholds[slot])
                ours = Side(None if decision in ("error", "na") else decision == "pass", outcome.score,
                            outcome.status)
            entry = criteria[key]
            entry.ours["pass" if ours.passed else "fail" if ours.passed is False else "error"] += 1
            entry.theirs["pass" if theirs.passed else "fail" if theirs.passed is False else "error"] += 1
            if ours.passed is not None and theirs.passed is not None:
                entry.both += 1
                entry.agree += ours.passed == theirs.passed
            if ours.score is not None and theirs.score is not None:
                gap = abs(ours.score - theirs.score)
                entry.max_score_gap = gap if entry.max_score_gap is None else max(entry.max_score_gap, gap)
            line["criteria"][key] = {"studio": {"passed": ours.passed, "score": ours.score, "status": ours.status},
                                     "openai": {"passed": theirs.passed, "score": theirs.score}}
        rows.append(line)
    return Comparison(criteria, rows, unmatched, sorted(unknown))
