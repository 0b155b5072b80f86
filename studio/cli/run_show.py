"""``runs show`` and ``runs list`` for a reviewer at a terminal.

``runs show ID`` prints the summary and one row a result (what was asked, answered and expected, cut
to the terminal's width; ``--json`` gives every text whole); ``--failed`` keeps what did not pass
(errors, invalid answers, a FAIL or a score under the run's pass threshold), ``--errors`` only errors
and invalid answers; ``--sample SID`` prints one sample whole: its thread, the reference, the score and
the judge's full rationale.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, TextIO

from studio.core.engine.sections import load_run
from studio.core.engine.usage import run_usage
from studio.core.models import RunInfo
from studio.core.store import LibraryError
from studio.core.store.reports import iter_records, result_record, run_query
from studio.core.store.results_query import ResultFilter, load_result, outcome_word, result_id_of

from .app import CliApp, CliError
from .tables import STATUS_COLOURS, Column, paint, print_table, terminal_width, use_colour

RESULT_COLUMNS = (Column("#", right=True), Column("SAMPLE"), Column("RESULT", colour=True),
                  Column("SCORE", right=True), Column("INPUT", flexible=True), Column("OUTPUT", flexible=True),
                  Column("EXPECTED", flexible=True), Column("WHY", flexible=True))
RUN_COLUMNS = (Column("RUN", right=True), Column("STATUS", colour=True), Column("GRADER", flexible=True),
               Column("DATASET", flexible=True), Column("DONE", right=True), Column("MEAN", right=True),
               Column("CREATED"))


def list_rows(infos: list[RunInfo]) -> list[list[Any]]:
    rows = []
    for i in infos:
        mean = i.aggregates.get("mean")
        rows.append([i.id, i.status, i.label, i.dataset, f"{i.done}/{i.total}",
                     "" if mean is None else f"{mean:.4f}", i.created_at.strftime("%Y-%m-%d %H:%M")])
    return rows


def print_runs(infos: list[RunInfo]) -> None:
    print_table(list_rows(infos), RUN_COLUMNS)


def _filter(args: argparse.Namespace, threshold: float) -> ResultFilter:
    if args.errors:
        return ResultFilter(statuses=("error", "invalid"))
    if args.failed:
        return ResultFilter(failing=True, pass_threshold=threshold)
    return ResultFilter()


def result_rows(records: list[dict[str, Any]], threshold: float) -> list[list[Any]]:
    return [[r["index"], r["sample_id"], outcome_word(r["status"], r["score"], r["details"], threshold),
             "" if r["score"] is None else f"{r['score']:.3f}", r["input"], r["completion"], r["expected"],
             r["error"] or r["rationale"]] for r in records]


def cmd_show(args: argparse.Namespace, app: CliApp, summary: Any, print_summary: Any) -> int:
    try:
        info = app.library.runs.get(args.run_id)
        query = run_query(app.library, args.run_id)
    except LibraryError as exc:
        raise CliError(str(exc)) from None
    threshold = info.pass_threshold
    if args.sample is not None:
        return _show_sample(app, info, query.dataset_id, args.sample, threshold, args.json)
    query = query.with_filter(_filter(args, threshold))
    records = list(iter_records(app.library.engine, query))
    usage = run_usage(app.library, load_run(app.library, info.id))
    if args.json:
        app.print_json({"run": {**summary(info), "usage": usage.to_json()}, "results": records})
        return 0
    print_summary(info)
    for line in usage.lines():
        print(line)
    print()
    if not records:
        which = "errors or invalid results" if args.errors else "failed results" if args.failed else "results"
        print(f"run {info.id} has no {which}.")
        return 0
    print_table(result_rows(records, threshold), RESULT_COLUMNS)
    return 0


def _show_sample(app: CliApp, info: RunInfo, dataset_id: int, sample: str, threshold: float, as_json: bool) -> int:
    result_id = result_id_of(app.library.engine, info.id, sample)
    result = None if result_id is None else load_result(app.library.engine, dataset_id, result_id)
    if result is None:
        raise CliError(f"run {info.id} has no result for sample {sample!r}")
    data = result.get("sample_data") if isinstance(result.get("sample_data"), dict) else {}
    word = outcome_word(result["status"], result["score"], result.get("details"), threshold)
    if as_json:
        app.print_json({"run": info.id, "threshold": threshold, "result": word, **result_record(result),
                        "sample": data})
        return 0
    write_sample(sys.stdout, info, result, data, word, threshold)
    return 0


def write_sample(out: TextIO, info: RunInfo, result: dict[str, Any], data: dict[str, Any], word: str,
                 threshold: float) -> None:
    """One result whole, wrapped to the terminal: header, thread, reference, score, rationale, error."""
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
    out.write(f"run {info.id} · {info.grader_key} v{info.grader_version} on {info.dataset} · sample "
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
    para(data.get("expected") if data.get("expected") is not None else "(none)")
    if result.get("error"):
        section("Error")
        para(result["error"])
    section("Rationale")
    para(result.get("rationale") or "(the grader gave none)")
    details = result.get("details") or {}
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
