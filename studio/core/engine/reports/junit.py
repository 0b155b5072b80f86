"""A run as JUnit XML, the report every CI system reads.

One ``<testsuite>`` per grader, one ``<testcase>`` per sample (named by its sample id, classed by
the grader's key), each decided by the pass rule (models/pass_rule), so its counts are the run
summary's: a fail (a score below the grader's pass threshold, a judge's own FAIL, an invalid answer)
is a ``<failure>`` whose message says why with the rationale's first line; an error is ``<error>``;
an NA (a skipped sample) is ``<skipped>``. Attribute names and nesting follow the common JUnit schema
(the one Jenkins, GitLab and the GitHub test reporters read).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from fractions import Fraction

from studio.core.models.pass_rule import deciding_clause
from studio.core.models.spend import exact_decimal
from studio.core.store import Library

from ..sections import (
    ResultRow,
    RunSections,
    Section,
    decision_of,
    first_line,
    section_rows,
    verdict_of,
)
from ..summary import GraderSummary
from . import Generated

# characters XML 1.0 cannot hold at all (a judge's reply may carry them): dropped, not escaped
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _ILLEGAL.sub("", text)


def _case(suite: ET.Element, section: Section, row: ResultRow) -> str:
    """Add one sample's testcase; returns its kind: passed, failure, error or skipped."""
    case = ET.SubElement(suite, "testcase", name=_clean(str(row["sample_id"])), classname=section.key,
                         time=f"{(row['duration_ms'] or 0.0) / 1000:.3f}")
    status, score = row["status"], row["score"]
    decision = decision_of(row, section.pass_threshold)
    if decision == "na":
        ET.SubElement(case, "skipped", message=_clean(first_line(row["rationale"]) or "not applicable (NA)"))
        return "skipped"
    if decision == "error":
        reason = first_line(row["error"]) or first_line(row["rationale"]) or f"{status} result"
        element = ET.SubElement(case, "error", message=_clean(f"{status}: {reason}"), type=status)
        element.text = _clean(row["error"] or row["rationale"] or "")
        return "error"
    if decision == "fail":
        rationale = first_line(row["rationale"]) or first_line(row["error"])
        clause = deciding_clause(status, score, verdict_of(row), section.pass_threshold)
        if status == "invalid":
            why, kind = f"invalid: {first_line(row['error']) or 'not a score'}", "invalid"
        elif clause is not None and clause.score == "below":
            why, kind = f"score {score:.4f} < pass threshold {section.pass_threshold:g}", "below threshold"
        else:  # the rule's verdict clause decided: the judge's own FAIL
            why, kind = "the judge's verdict is FAIL", "verdict"
        message = why + (f": {rationale}" if rationale and status != "invalid" else "")
        element = ET.SubElement(case, "failure", message=_clean(message), type=kind)
        element.text = _clean(row["rationale"] or row["error"] or "")
        return "failure"
    return "passed"


def junit_xml(library: Library, run: RunSections, generated: Generated | None = None) -> str:
    """The whole report as text (UTF-8 XML with its declaration); ``generated``: the generation the
    run's outputs came from (``run --generate-with``), in each test suite's properties."""
    info = run.info
    extra = [] if generated is None else generation_properties(generated, run.usage.cost)
    root = ET.Element("testsuites", name=f"grader-studio run {info.id}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    stamp = (info.created_at if isinstance(info.created_at, datetime) else datetime.now()).replace(microsecond=0)
    for section in run.sections:
        suite = ET.SubElement(root, "testsuite", name=section.label, timestamp=stamp.isoformat(),
                              hostname="grader-studio")
        props = ET.SubElement(suite, "properties")
        for name, value in (("run", info.id), ("grader", section.key), ("grader_version", section.version),
                            ("dataset", info.dataset), ("endpoint", section.endpoint or ""),
                            ("pass_threshold", f"{section.pass_threshold:g}"),
                            *figure_properties(section.summary), ("status", info.status)):
            ET.SubElement(props, "property", name=name, value=_clean(str(value)))
        for name, text in extra:
            ET.SubElement(props, "property", name=name, value=_clean(text))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_seconds = 0.0
        for row in section_rows(library, info.id, section):
            kind = _case(suite, section, row)
            counts["tests"] += 1
            suite_seconds += (row["duration_ms"] or 0.0) / 1000
            if kind == "failure":
                counts["failures"] += 1
            elif kind == "error":
                counts["errors"] += 1
            elif kind == "skipped":
                counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{suite_seconds:.3f}")
        seconds += suite_seconds
        # the properties come first in the schema; ElementTree keeps insertion order, so they do
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def figure_properties(summary: GraderSummary) -> list[tuple[str, str]]:
    """The grader's figures from its one summary, each estimate with its 95% interval (an empty
    value where there is none: no graded result, or a spread that states no interval; NA is never 0):
    ``mean`` and ``mean_ci_low``/``mean_ci_high`` (``interval`` names the method), ``pass_rate`` and
    its Wilson interval, ``n`` the scores the mean is over."""
    def number(value: float | None) -> str:
        return "" if value is None else f"{value:.6f}"

    low, high = summary.mean_ci or (None, None)
    rate_low, rate_high = summary.pass_rate_ci or (None, None)
    return [("mean", number(summary.mean)), ("mean_ci_low", number(low)), ("mean_ci_high", number(high)),
            ("interval", summary.interval_method if summary.mean_ci is not None else ""),
            ("pass_rate", number(summary.pass_rate)), ("pass_rate_ci_low", number(rate_low)),
            ("pass_rate_ci_high", number(rate_high)), ("n", str(summary.n))]


def generation_properties(generated: Generated, judging: Fraction | None) -> list[tuple[str, str]]:
    """The properties naming the model whose outputs a run graded (``run --generate-with``) and what
    generating them cost, apart from the judging's cost."""
    values = (("generated_by_endpoint", generated.endpoint), ("generated_by_model", generated.model),
              ("generated_from", generated.source_dataset), ("generation_calls", generated.calls),
              ("generation_tokens", generated.tokens), ("generation_cost_usd", generated.cost or ""),
              ("judging_cost_usd", "" if judging is None else exact_decimal(judging)))
    return [(name, str(value)) for name, value in values]
