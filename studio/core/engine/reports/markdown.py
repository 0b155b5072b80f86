"""A run as the markdown a reviewer reads in a pull request (and ``$GITHUB_STEP_SUMMARY`` shows).

Per grader: the mean with its 95% interval, the pass rate and the counts (the run's one summary,
engine/summary.py, as every other surface shows them) and the five worst samples
with their rationale's first line; with a baseline run of the same dataset, the change against it
(samples that flipped up and down across the pass threshold, the mean difference with a paired
bootstrap interval) and a line saying whether that change is clear. Numbers are the run's own,
rounded only as printed (4 decimals for scores, as ``runs show`` prints them).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from studio.core.models.pass_rule import SCORED_STATUSES
from studio.core.store import Library

from ..sections import RunSections, Section, decision_of, first_line, section_rows
from ..usage import Usage, format_usd
from ..verdict import Verdict
from . import Generated

WORST = 5

#: every character that can start markup in GitHub-flavoured markdown (emphasis, code, links and
#: images, raw HTML and entities, tables, headings, strikethrough, math): each is escaped with a backslash
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>|#!&~$])")


def cell(text: object) -> str:
    """Any name a person or an endpoint chose (a dataset, a grader, an endpoint, a model, a suite, a
    sample id, a rationale) as plain text in markdown: one line, every special character escaped, so
    it can sit in a table cell, a heading or a sentence and never become a link, HTML, a code span
    or a new cell. The one escape of every markdown the studio writes."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


@dataclass
class Change:
    """A grader's change against the same grader in the baseline run, on samples both scored."""

    n: int
    mean_delta: float | None
    ci: tuple[float, float] | None
    up: int    # failed in the baseline, pass now
    down: int  # passed in the baseline, fail now
    reading: str


def _scored(library: Library, run_id: int, section: Section) -> dict[str, tuple[float, str]]:
    """Each scored sample's score and its decision by the pass rule at the section's threshold."""
    return {row["sample_id"]: (float(row["score"]), decision_of(row, section.pass_threshold))
            for row in section_rows(library, run_id, section)
            if row["status"] in SCORED_STATUSES and row["score"] is not None}


def change(library: Library, run: RunSections, section: Section, baseline: RunSections) -> Change | None:
    """None when the baseline has no section of this grader."""
    base = next((s for s in baseline.sections if s.key == section.key), None)
    if base is None:
        return None
    now = _scored(library, run.info.id, section)
    before = _scored(library, baseline.info.id, base)
    common = [sid for sid in now if sid in before]
    a = [before[s][0] for s in common]
    b = [now[s][0] for s in common]
    # scipy takes 1-3 s and 70 MB to import: wanted only against a baseline
    from studio.core import stats

    delta = stats.mean_difference(a, b)
    up = sum(1 for s in common if before[s][1] != "pass" and now[s][1] == "pass")
    down = sum(1 for s in common if before[s][1] == "pass" and now[s][1] != "pass")
    if delta.value is None:
        reading = "no samples scored in both runs: no comparison"
    elif delta.ci is not None and delta.ci[0] > 0:
        reading = f"better than run {baseline.info.id}: the whole interval is above 0"
    elif delta.ci is not None and delta.ci[1] < 0:
        reading = f"worse than run {baseline.info.id}: the whole interval is below 0"
    else:
        reading = f"no clear change against run {baseline.info.id}: the interval includes 0"
    return Change(n=len(common), mean_delta=delta.value, ci=delta.ci, up=up, down=down, reading=reading)


def markdown_report(library: Library, run: RunSections, verdict: Verdict, *,
                    baseline: RunSections | None = None, usage: Usage | None = None,
                    generated: Generated | None = None) -> str:
    """The report; ``generated``: the generation the run's outputs came from (``run --generate-with``),
    said in a section of its own with what making them cost beside what judging them cost."""
    info = run.info
    outcome = {"pass": "PASS", "fail": "FAIL", "not done": "NOT DONE"}[verdict.outcome]
    out = [f"## Grader Studio run {info.id}: {cell(info.dataset)}", "",
           f"**Verdict: {outcome}** ({cell(verdict.sentence.removeprefix('verdict: '))})", "",
           f"Run {info.id} ({info.status}), {info.done:,} of {info.total:,} samples graded"
           + _suite_words(run) + ".", ""]
    out += ["| grader | mean (95% CI) | pass rate (95% CI) | ok | invalid | error | NA |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    rows = ([(f"overall ({cell(run.rule)})", run.overall)] if run.overall is not None else [])  # a suite's own
    rows += [(cell(section.label), section.summary) for section in run.sections]
    for name, found in rows:  # every figure from the run's one summary (engine/summary.py)
        ci = found.interval_text("words")
        counts = found.counts
        out.append(f"| {name} | {_fmt(found.mean)}{f' ({ci})' if ci else ''} | "
                   f"{found.pass_rate_text('words') or 'n/a'} (score >= {found.threshold:g}) | "
                   f"{counts['ok']} | {counts['invalid']} | {counts['error']} | {counts['na']} |")
    for section in run.sections:
        worst = list(section_rows(library, info.id, section, order="score ASC, sample_idx", limit=WORST,
                                  extra=f" AND status IN {SCORED_STATUSES!r} AND score IS NOT NULL"))
        out += ["", f"### {cell(section.label)}: the {len(worst)} lowest scores", ""]
        if worst:
            out += ["| sample | score | rationale |", "| --- | ---: | --- |"]
            out += [f"| {cell(r['sample_id'])} | {r['score']:.4f} | {cell(first_line(r['rationale']))} |"
                    for r in worst]
        else:
            out.append("No scored samples.")
        if baseline is not None:
            moved = change(library, run, section, baseline)
            out.append("")
            if moved is None:
                out.append(f"Baseline run {baseline.info.id} has no {cell(section.key)} results to compare with.")
            else:
                ci = "" if moved.ci is None else f" (95% paired CI {moved.ci[0]:+.4f} to {moved.ci[1]:+.4f})"
                delta = "n/a" if moved.mean_delta is None else f"{moved.mean_delta:+.4f}"
                out += [f"Against baseline run {baseline.info.id}, on {moved.n} samples both scored: "
                        f"mean change {delta}{ci}; {moved.up} flipped up (fail to pass), "
                        f"{moved.down} flipped down (pass to fail).", "",
                        f"**Baseline verdict: {moved.reading}.**"]
    if usage is not None and (usage.total.tokens or usage.total.calls):
        out += ["", "### Tokens and cost", "",
                "| | calls | prompt tokens | cached | completion tokens | cost |",
                "| --- | ---: | ---: | ---: | ---: | ---: |"]
        tallies = [("total", usage.total, usage.cost)]
        tallies += [(f"grader {k}", t, usage.grader_cost.get(k)) for k, t in usage.graders.items()]
        tallies += [(f"endpoint {k}", t, usage.endpoint_cost.get(k)) for k, t in usage.endpoints.items()]
        out += [f"| {cell(name)} | {t.calls:,} | {t.prompt_tokens:,} | {t.cached_tokens:,} | "
                f"{t.completion_tokens:,} | {format_usd(cost)} |" for name, t, cost in tallies]
    text = "\n".join(out) + "\n"
    if generated is not None:
        text += generation_section(generated, None if usage is None else usage.cost)
    return text


def generation_section(generated: Generated, judging: Fraction | None) -> str:
    """The section on the generated outputs (``run --generate-with``) and both costs."""
    return (f"\n## Outputs generated\n\n"
            f"Dataset {cell(generated.dataset)}: {generated.stored} answers from endpoint {cell(generated.endpoint)} "
            f"(model {cell(generated.model)}) to the inputs of {cell(generated.source_dataset)}.\n\n"
            f"| cost | calls | tokens | USD |\n|---|---:|---:|---:|\n"
            f"| generation | {generated.calls} | {generated.tokens:,} | {format_usd(generated.price())} |\n"
            f"| judging | | | {format_usd(judging)} |\n")


def _suite_words(run: RunSections) -> str:
    if not run.suite:
        return ""
    graders = len(run.sections)
    if run.overall is None:
        return f" by a suite of {graders} graders with no overall rule (no overall score)"
    return f" by a suite of {graders} graders, overall score ({cell(run.rule)}) {_fmt(run.overall_mean)}"


def append_step_summary(markdown: str, environ: dict[str, str] | None = None) -> Path | None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when set (GitHub Actions shows it on the run's page)."""
    target = (os.environ if environ is None else environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as out:
        out.write(markdown + "\n")
    return path
