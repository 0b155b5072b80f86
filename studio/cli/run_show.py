"""``runs show`` and ``runs list`` for a reviewer at a terminal.

``runs show ID`` prints the summary and one row a result (what was asked, answered and expected, cut
to the terminal's width; ``--json`` gives every text whole); ``--failed`` keeps what did not pass
(errors, invalid answers, a FAIL or a score under the run's pass threshold), ``--errors`` only errors
and invalid answers; ``--sample SID`` prints one sample whole: its thread, the reference, the score and
the judge's full rationale. A terminal gets the first ``SHOW_ROWS`` results (``--limit N``, 0 for all)
and a line saying how many there are; ``--json`` streams every result (or ``--limit``'s first N), so
a million-result run costs neither a million lines nor a million dicts in memory.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TextIO

from studio.core.engine.sections import load_run
from studio.core.engine.summary import stored_summary
from studio.core.json_types import JsonObject
from studio.core.models import RunInfo
from studio.core.outside import printable_json, shown_time
from studio.core.store.reports import iter_records, result_record, run_query
from studio.core.store.results_query import (
    ResultFilter,
    judges_first,
    load_result,
    outcome_word,
    result_id_of,
)
from studio.core.store.run_graders import run_graders

from .app import CliApp, CliError
from .tables import STATUS_COLOURS, Column, paint, print_table, terminal_width, use_colour

if TYPE_CHECKING:
    from studio.core.engine.sections import RunSections
    from studio.core.store.library import Library


class SummaryJson(Protocol):
    """``run_report.summary``: the run's ``--json`` summary (``runs show --adjudicated`` adds to it)."""

    def __call__(self, info: RunInfo, library: Library | None = None,
                 run: RunSections | None = None) -> JsonObject: ...


class SummaryPrinter(Protocol):
    """``runs._print_summary``: the run's summary for a person."""

    def __call__(self, info: RunInfo, library: Library | None = None, run: RunSections | None = None) -> None: ...

RESULT_COLUMNS = (Column("#", right=True), Column("SAMPLE"), Column("RESULT", colour=True),
                  Column("SCORE", right=True), Column("INPUT", flexible=True), Column("OUTPUT", flexible=True),
                  Column("EXPECTED", flexible=True), Column("WHY", flexible=True))
#: result rows ``runs show`` prints to a terminal unless ``--limit`` says otherwise (a million-result
#: run's failures are a scroll no one reads; the first page and the counts are what a reviewer needs)
SHOW_ROWS = 50
RUN_COLUMNS = (Column("RUN", right=True), Column("STATUS", colour=True), Column("GRADER", flexible=True),
               Column("DATASET", flexible=True), Column("DONE", right=True), Column("MEAN", right=True),
               Column("CREATED"))


def when(moment: datetime | None) -> str:
    """A stored time as a listing shows it; None (a time the library could not read): "unknown time"."""
    return shown_time(moment)


def list_rows(infos: list[RunInfo]) -> list[list[object]]:
    rows: list[list[object]] = []
    for i in infos:
        mean = stored_summary(i).mean
        rows.append([i.id, i.status, i.label, i.dataset, f"{i.done}/{i.total}",
                     "" if mean is None else f"{mean:.4f}", when(i.created_at)])
    return rows


def print_runs(infos: list[RunInfo]) -> None:
    print_table(list_rows(infos), RUN_COLUMNS)


def _filter(args: argparse.Namespace, threshold: float) -> ResultFilter:
    if args.errors:
        return ResultFilter(statuses=("error", "invalid"))
    if args.failed:
        return ResultFilter(failing=True, pass_threshold=threshold)
    return ResultFilter()


def result_rows(records: list[JsonObject], threshold: float) -> list[list[object]]:
    return [[r["index"], r["sample_id"], outcome_word(r["status"], r["score"], r["details"], threshold),
             "" if r["score"] is None else f"{r['score']:.3f}", r["input"], r["completion"], r["expected"],
             r["error"] or r["rationale"]] for r in records]


def _matching(args: argparse.Namespace, info: RunInfo, run: RunSections) -> int | None:
    """How many results the filter selects, from the run's one summary (no second pass over the
    run): not passed = the pass rule's fail + error decisions, errors = error + invalid statuses."""
    if args.failed:
        headline = run.headline
        return None if headline is None else headline.decisions.get("fail", 0) + headline.decisions.get("error", 0)
    if args.errors:
        return info.counts.get("error", 0) + info.counts.get("invalid", 0)
    return info.done


def _stream_json(out: TextIO, head: JsonObject, records: Iterator[JsonObject]) -> None:
    """``{"run": head, "results": [...]}`` as ``print_json`` writes it (indent 2), one record at a
    time: a million results cost one record's memory, not a million dicts and their text."""
    def dumps(value: object, indent: str) -> str:
        return printable_json(json.dumps(value, indent=2, default=str, ensure_ascii=False)).replace("\n", "\n" + indent)

    out.write('{\n  "run": ' + dumps(head, "  ") + ',\n  "results": [')
    wrote = False
    for record in records:
        out.write(("," if wrote else "") + "\n    " + dumps(record, "    "))
        wrote = True
    out.write("\n  ]\n}\n" if wrote else "]\n}\n")


def cmd_show(args: argparse.Namespace, app: CliApp, summary: SummaryJson, print_summary: SummaryPrinter,
             info: RunInfo | None = None) -> int:
    if info is None:
        info = app.library.runs.get(args.run_id)
    query = run_query(app.library, args.run_id)
    threshold = info.pass_threshold
    if args.sample is not None:
        return _show_sample(app, info, query.dataset_id, args.sample, threshold, args.json)
    query = query.with_filter(_filter(args, threshold))
    limit = getattr(args, "limit", None)
    if limit is not None and limit < 0:
        raise CliError(f"--limit must be 0 (every result) or more, not {limit}", 2)  # bad input: exit 2
    if limit == 0:
        limit = None
    elif limit is None and not args.json:
        limit = SHOW_ROWS  # a terminal gets a page; --json gives every result unless --limit says otherwise
    run = load_run(app.library, info.id, info=info)
    usage = run.usage
    if args.json:
        _stream_json(sys.stdout, {**summary(info, run=run), "usage": usage.to_json()},
                     iter_records(app.library.engine, query, limit=limit))
        return 0
    records = list(iter_records(app.library.engine, query, limit=limit))
    print_summary(info, run=run)
    for line in usage.lines():
        print(line)
    print()
    which = "errors or invalid results" if args.errors else "failed results" if args.failed else "results"
    if not records:
        print(f"run {info.id} has no {which}.")
        return 0
    print_table(result_rows(records, threshold), RESULT_COLUMNS)
    matching = _matching(args, info, run)
    if limit is not None and len(records) == limit and (matching is None or matching > limit):
        of = "" if matching is None else f" of {matching:,}"
        flag = " --failed" if args.failed else " --errors" if args.errors else ""
        print(f"\nthe first {limit:,}{of} {which} in sample order; more: runs show {info.id}{flag} --limit N "
              f"(0: all), every one as JSON: --json, or runs export {info.id}")
    return 0


def _show_sample(app: CliApp, info: RunInfo, dataset_id: int, sample: str, threshold: float, as_json: bool) -> int:
    result_id = result_id_of(app.library.engine, info.id, sample)
    result = None if result_id is None else load_result(app.library.engine, dataset_id, result_id)
    if result is None:
        raise CliError(f"run {info.id} has no result for sample {sample!r}")
    stored = result.get("sample_data")
    data: JsonObject = stored if isinstance(stored, dict) else {}
    word = outcome_word(result["status"], result["score"], result.get("details"), threshold)
    graders = _graders_of(app, info, result)
    if as_json:
        extra = {} if graders is None else {"graders": [_grader_json(g) for g in graders]}
        app.print_json({"run": info.id, "threshold": threshold, "result": word, **result_record(result),
                        "sample": data, **extra})
        return 0
    write_sample(sys.stdout, info, result, data, word, threshold, graders)
    return 0


def _graders_of(app: CliApp, info: RunInfo, result: JsonObject) -> list[JsonObject] | None:
    """A suite run's sample: every grader's result, the judges first (``judges_first``), each with
    its threshold and its word by the pass rule; None for a run of one grader."""
    if info.suite is None or not result.get("graders"):
        return None
    thresholds = {g.key: g.threshold for g in run_graders(app.library, info.id)}
    out = []
    for entry in judges_first(result["graders"]):
        limit = thresholds.get(entry["grader"], info.pass_threshold)
        out.append({**entry, "threshold": limit, "result": outcome_word(
            entry["status"], entry.get("score"), entry.get("details"), limit)})
    return out


def _grader_json(entry: JsonObject) -> JsonObject:
    keep = ("grader", "version", "result", "threshold", "status", "score", "scores", "rationale", "error",
            "details", "duration_ms", "prompt_tokens", "completion_tokens", "cached")
    return {k: entry.get(k) for k in keep}


def write_sample(out: TextIO, info: RunInfo, result: JsonObject, data: JsonObject, word: str,
                 threshold: float, graders: list[JsonObject] | None = None) -> None:
    """One result whole, wrapped to the terminal: header, thread, reference, score, rationale, error;
    for a suite run (``graders``), each grader's score, verdict and rationale, the judges first."""
    width = max(40, terminal_width(out))
    colour = use_colour(out)

    def section(title: str) -> None:
        out.write("\n" + paint(title, "bold", colour) + "\n")

    def para(text: str, indent: str = "  ") -> None:
        for line in str(text).splitlines() or [""]:
            wrapped = textwrap.wrap(line, width - len(indent), replace_whitespace=False,
                                    drop_whitespace=True) or [""]
            for piece in wrapped:
                out.write(indent + piece + "\n")

    score = result.get("score")
    out.write(f"run {info.id} · {info.label} on {info.dataset} · sample "
              f"{result['sample_id']} (#{result['sample_idx']})\n")
    facts = [paint(word, STATUS_COLOURS.get(word), colour),
             f"score {'—' if score is None else f'{score:.4g}'} (pass ≥ {threshold:g})"]
    if word != result["status"]:
        facts.append(f"status {result['status']}")
    facts.append(f"{result.get('duration_ms') or 0:.0f} ms")
    if result.get("cached"):
        facts.append("cached")
    out.write("  " + " · ".join(facts) + "\n")
    extra = {k: v for k, v in (result.get("scores") or {}).items() if k != "score"}
    if extra:
        out.write("  scores: " + ", ".join(f"{k} {v:.4g}" if isinstance(v, (int, float)) else f"{k} {v}"
                                           for k, v in extra.items()) + "\n")
    section("Thread")
    for turn in data.get("messages") or []:
        out.write(f"  {turn.get('role', '?')}:\n")
        para(turn.get("content", ""), "    ")
    if data.get("completion") is not None:
        out.write("  assistant (the completion graded):\n")
        para(data["completion"], "    ")
    if not data:
        out.write("  (the sample is not in the dataset any more)\n")
    section("Reference")
    expected = data.get("expected")
    para(expected if expected is not None else "(none)")
    if result.get("error"):
        section("Error")
        para(result["error"])
    if graders is None:
        section("Rationale")
        para(result.get("rationale") or "(the grader gave none)")
        _verdict_lists(result.get("details") or {}, para, section, colour)
        return
    for entry in graders:
        score = entry.get("score")
        head = (f"{entry['grader']} v{entry['version']}: {paint(entry['result'], STATUS_COLOURS.get(entry['result']), colour)}"
                f" · score {'—' if score is None else f'{score:.4g}'} (pass ≥ {entry['threshold']:g})")
        section(head)
        if entry.get("error"):
            para("error: " + str(entry["error"]))
        para(entry.get("rationale") or "(no rationale)")
        _verdict_lists(entry.get("details") or {}, para, section, colour)


def _verdict_lists(details: JsonObject, para: Callable[..., None], section: Callable[[str], None],
                   colour: bool) -> None:
    """A judge's per-item verdicts (criteria, claims ...) kept in its details, numbered."""
    for name, rows in details.items():
        if name == "calls" or not isinstance(rows, list) or not rows:
            continue
        if not all(isinstance(r, dict) and "verdict" in r for r in rows):
            continue
        section(name.replace("_", " ").capitalize())
        for n, row in enumerate(rows, 1):
            item = next((row[k] for k in ("criterion", "claim", "statement", "question", "text", "item")
                         if k in row), "")
            verdict = str(row.get("verdict"))
            para(f"{n}. {paint(verdict, STATUS_COLOURS.get(verdict), colour)} {item}".rstrip())
            if row.get("reasoning"):
                para(str(row["reasoning"]), "     ")
