"""A run's rows as the viewer packs them: each sample's result, thread, labels and metadata.

Read once, streamed from one SQL cursor (store/reports ``query_rows``) joined with the samples; a
suite run adds each grader's rows (store/run_graders). The verdict of each row is the pass rule's
word (``outcome_word``), the same ``runs show`` prints; nothing here computes a run's figures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction

from studio.core.engine.usage import Spent, cost_of, endpoint_configs, format_usd
from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.labels import DEFAULT_KEY
from studio.core.models.pass_rule import verdict_in
from studio.core.outside import shown_time
from studio.core.store import Library
from studio.core.store.reports import query_rows, run_query
from studio.core.store.results_query import outcome_word
from studio.core.store.run_graders import graders_with_results

from .pack import MISSING, Packer

#: metadata fields offered as filters (the first ones met, in the samples' order): a dataset with
#: hundreds of keys gives a page a short list, not a wall
MAX_META_FIELDS = 30
#: a metadata value longer than this is no filter value (a document, a list): left out of the filters
MAX_META_VALUE = 200

_SELECT = ("r.sample_idx, r.sample_id, r.status, r.score, r.error, r.rationale, r.details, r.raw,"
           " r.prompt_tokens, r.completion_tokens, r.cached_tokens, r.duration_ms, s.input_text, s.data")


def finite(value: JsonValue) -> float | None:
    """A score as JSON can carry it: None for no score (and for a NaN or infinity, which is none)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _loads(text: JsonValue) -> JsonValue:
    if text is None or isinstance(text, (dict, list)):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


class Prices:
    """A result's cost: its tokens at the prices of the endpoint its details name (a composite's, each
    component's), priced by engine/usage.py's ``cost_of`` and written by its ``format_usd`` — the
    arithmetic of the run's total; None without tokens or when an endpoint has no prices."""

    def __init__(self, library: Library, default: str | None) -> None:
        self.library, self.default = library, default
        self._configs: dict[str, EndpointConfig | None] = {}

    def _config(self, name: str | None) -> EndpointConfig | None:
        if name is None:
            return None
        if name not in self._configs:
            self._configs.update(endpoint_configs(self.library, [name]))
        return self._configs[name]

    def __call__(self, details: JsonValue, prompt: JsonValue, completion: JsonValue, cached: JsonValue) -> str | None:
        details = details if isinstance(details, dict) else {}
        parts = details.get("components")
        if not isinstance(parts, list):
            parts = [{"endpoint": details.get("endpoint") or self.default, "prompt_tokens": prompt,
                      "completion_tokens": completion, "cached_tokens": cached}]
        total: Fraction = Fraction(0)
        spent = False
        for part in parts:
            if not isinstance(part, dict):
                continue
            tally = Spent(0, int(part.get("prompt_tokens") or 0), int(part.get("completion_tokens") or 0),
                          int(part.get("cached_tokens") or 0))
            if not tally.tokens:
                continue
            cost = cost_of(tally, self._config(part.get("endpoint")))
            if cost is None:
                return None
            total += cost
            spent = True
        return format_usd(total) if spent else None


class Words:
    """The pass rule's word of a result (``outcome_word``), remembered by (status, score, judge's
    verdict): a run has few distinct ones, and 100,000 rows need not decide them 100,000 times."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._known: dict[tuple[str, float | None, str | int | float | None], str] = {}

    def __call__(self, status: str, score: float | None, details: JsonValue) -> str:
        verdict = verdict_in(details)
        key = (status, score, verdict if isinstance(verdict, (str, int, float, type(None))) else repr(verdict))
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = outcome_word(status, score, details, self.threshold)
        return found


@dataclass
class Columns:
    """Columnar arrays of one run, indexes into the packer's string table (``MISSING``: none)."""

    idx: list[int] = field(default_factory=list)
    sid: list[int] = field(default_factory=list)
    status: list[int] = field(default_factory=list)
    score: list[float | None] = field(default_factory=list)
    verdict: list[int] = field(default_factory=list)
    input: list[int] = field(default_factory=list)
    output: list[int] = field(default_factory=list)
    expected: list[int] = field(default_factory=list)
    rationale: list[int] = field(default_factory=list)
    error: list[int] = field(default_factory=list)
    ptok: list[int] = field(default_factory=list)
    ctok: list[int] = field(default_factory=list)
    ms: list[float | None] = field(default_factory=list)
    #: each result's cost at its endpoint's prices (``Prices``), MISSING when it has none
    cost: list[int] = field(default_factory=list)
    #: each sample's thread: [[role, content, tool calls as JSON, name], ...]
    thread: list[list[list[int]]] = field(default_factory=list)
    #: each sample's judge calls (when the cut keeps prompts): [[label, [[role, content], ...], answer, prompt
    #: tokens, completion tokens], ...]; a result without calls: its raw answer alone
    calls: JsonArray = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return dict(self.__dict__)


def pack_calls(packer: Packer, details: JsonValue, raw: JsonValue) -> JsonValue:
    """A result's exact prompts and answers (details["calls"], judges/trace.py), or its raw answer."""
    if not packer.cut.prompts:
        return None
    calls = details.get("calls") if isinstance(details, dict) else None
    if isinstance(calls, list) and calls:
        out = []
        for call in calls:
            if not isinstance(call, dict):
                continue
            messages = [[packer.name(str(m.get("role", "?"))), packer.text(m.get("content"))]
                        for m in call.get("messages") or [] if isinstance(m, dict)]
            out.append([packer.name(str(call.get("label", ""))), messages, packer.text(call.get("response")),
                        int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0)])
        return out
    return None if raw is None else packer.text(raw)


def _thread(packer: Packer, data: JsonObject) -> list[list[int]]:
    turns = []
    for turn in data.get("messages") or []:
        if not isinstance(turn, dict):
            continue
        tools = turn.get("tool_calls")
        turns.append([packer.name(str(turn.get("role", "?"))), packer.text(turn.get("content", "")),
                      packer.text(tools) if tools else MISSING, packer.name(turn.get("name"))])
    return turns


@dataclass
class RunRows:
    """One run read for a page: its columns, metadata filters, labels and (suite) graders."""

    columns: Columns
    meta: dict[str, list[int]]
    labels: JsonArray
    label_column: list[int]
    label_set: str | None
    graders: list[JsonObject]
    by_sample: dict[str, int]


def read_run(library: Library, run_id: int, packer: Packer) -> RunRows:
    """Every result of the run in sample order, packed; the sample's thread from its stored JSON."""
    info = library.runs.get(run_id)
    threshold = info.pass_threshold
    query = run_query(library, run_id)
    cols = Columns()
    meta: dict[str, list[int]] = {}
    by_sample: dict[str, int] = {}
    sample_ids: list[str] = []
    words = Words(threshold)
    prices = Prices(library, info.endpoint)
    for (idx, sid, status, score, error, rationale, details, raw, ptok, ctok, ktok, ms, input_text,
         data) in query_rows(library.engine, query, None, columns=_SELECT):
        details = _loads(details) or {}
        sample = _loads(data)
        sample = sample if isinstance(sample, dict) else {}
        row = len(cols.idx)
        by_sample[str(sid)] = row
        sample_ids.append(str(sid))
        cols.idx.append(int(idx))
        cols.sid.append(packer.name(str(sid)))
        cols.status.append(packer.name(status))
        cols.score.append(finite(score))
        cols.verdict.append(packer.name(words(status, score, details)))
        cols.input.append(packer.text(input_text))  # the stored one: Sample.input_text, the last user turn
        cols.output.append(packer.text(sample.get("completion")))
        cols.expected.append(packer.text(sample.get("expected")))
        cols.rationale.append(packer.text(rationale))
        cols.error.append(packer.text(error))
        cols.ptok.append(int(ptok or 0))
        cols.ctok.append(int(ctok or 0))
        cols.cost.append(packer.name(prices(details, ptok, ctok, ktok)))
        cols.ms.append(finite(ms))
        cols.thread.append(_thread(packer, sample))
        cols.calls.append(pack_calls(packer, details, _loads(raw)))
        _add_meta(packer, meta, row, sample.get("metadata"))
    for values in meta.values():  # a field first met on a late sample: missing on every later one too
        values.extend([MISSING] * (len(cols.idx) - len(values)))
    labels, label_column, label_set = _labels(library, info.dataset, packer, sample_ids)
    return RunRows(cols, meta, labels, label_column, label_set,
                   _graders(library, run_id, packer, by_sample, len(cols.idx)) if info.suite else [], by_sample)


def _add_meta(packer: Packer, meta: dict[str, list[int]], row: int, metadata: JsonValue) -> None:
    if not isinstance(metadata, dict):
        return
    for key, value in metadata.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)) or len(str(value)) > MAX_META_VALUE:
            continue
        column = meta.get(key)
        if column is None:
            if len(meta) >= MAX_META_FIELDS:
                continue
            column = meta[key] = []
        column.extend([MISSING] * (row - len(column)))
        column.append(packer.name(str(value)))


def _labels(library: Library, dataset: str, packer: Packer,
            sample_ids: list[str]) -> tuple[JsonArray, list[int], str | None]:
    """Each sample's current human labels of every label set, with their authors ([set, value,
    labeler, note, time]), and the filterable label column (the default set's, else the first set's)."""
    keys = library.labels.keys(dataset)
    per_sample: JsonArray = [None] * len(sample_ids)
    column = [MISSING] * len(sample_ids)
    shown = DEFAULT_KEY if DEFAULT_KEY in keys else (keys[0] if keys else None)
    position = {sid: row for row, sid in enumerate(sample_ids)}
    for key in keys:
        for sid, label in library.labels.current(dataset, key).items():
            row = position.get(sid)
            if row is None:
                continue
            entry = [packer.name(key), packer.name(label.value), packer.name(label.labeler or None),
                     packer.text(label.note or None), packer.name(shown_time(label.created_at))]
            if per_sample[row] is None:
                per_sample[row] = []
            per_sample[row].append(entry)
            if key == shown:
                column[row] = packer.name(label.value)
    return per_sample, column, shown


def _graders(library: Library, run_id: int, packer: Packer, by_sample: dict[str, int],
             rows: int) -> list[JsonObject]:
    """A suite run's graders, each with its columns aligned to the run's rows."""
    out = []
    for grader, results in graders_with_results(library, run_id):
        score: list[float | None] = [None] * rows
        verdict, status, rationale, error = ([MISSING] * rows for _ in range(4))
        words = Words(grader.threshold)
        ptok, ctok = [0] * rows, [0] * rows
        cost = [MISSING] * rows
        prices = Prices(library, None)
        calls: JsonArray = [None] * rows
        for result in results:
            row = by_sample.get(str(result["sample_id"]))
            if row is None:
                continue
            score[row] = finite(result["score"])
            status[row] = packer.name(result["status"])
            verdict[row] = packer.name(words(result["status"], result["score"], result["details"]))
            rationale[row] = packer.text(result["rationale"])
            error[row] = packer.text(result["error"])
            ptok[row], ctok[row] = int(result["prompt_tokens"] or 0), int(result["completion_tokens"] or 0)
            cost[row] = packer.name(prices(result["details"], result["prompt_tokens"], result["completion_tokens"],
                                           result.get("cached_tokens")))
            calls[row] = pack_calls(packer, result["details"], result["raw"])
        out.append({"key": grader.key, "version": grader.version, "threshold": grader.threshold,
                    "score": score, "status": status, "verdict": verdict, "rationale": rationale,
                    "error": error, "ptok": ptok, "ctok": ctok, "cost": cost, "calls": calls})
    return out
