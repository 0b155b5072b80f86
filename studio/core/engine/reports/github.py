"""GitHub workflow commands for a run: annotations on the workflow's summary page.

``::error`` for each threshold a grader (or the run's overall score) missed, and for a run that could
not be done; ``::warning`` for each error and invalid result. At most ``MAX_LINES`` lines in all, the
last of them counting what was left out, so a run with a thousand errors does not flood the log.
Values are escaped as GitHub's runner reads them (``%``, CR and LF in messages; also ``:`` and ``,``
in properties).
"""

from __future__ import annotations

from studio.core.models.pass_rule import reaches
from studio.core.store import Library

from ..sections import RunSections, first_line, section_rows
from ..summary import GraderSummary
from ..verdict import EXIT_NOT_DONE, Verdict

MAX_LINES = 50


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _interval(summary: GraderSummary | None) -> str:
    """The mean's 95% interval after a threshold line (an estimate is never said without it when it
    has one): ``; 95% interval [0.2750, 0.5250], pass rate 40.0% [28.6%, 52.6%]``."""
    if summary is None:
        return ""
    parts = [f"95% interval {summary.interval_text()}"] if summary.mean_ci is not None else []
    if summary.pass_rate is not None:
        parts.append(f"pass rate {summary.pass_rate_text()}")
    return "; " + ", ".join(parts) if parts else ""


def command(kind: str, title: str, message: str) -> str:
    return f"::{kind} title={_prop(title)}::{_data(message)}"


def workflow_commands(library: Library, run: RunSections, verdict: Verdict,
                      max_lines: int = MAX_LINES) -> list[str]:
    info = run.info
    lines: list[str] = []
    if verdict.exit_code == EXIT_NOT_DONE:
        lines.append(command("error", f"Grader Studio run {info.id} not done",
                             f"run {info.id} ended {info.status}: " + "; ".join(verdict.reasons)))
    if verdict.fail_under is not None and verdict.fail_under_applies_to == "overall" and (
            verdict.mean is None or not reaches(verdict.mean, verdict.fail_under)):
        mean = "none" if verdict.mean is None else f"{verdict.mean:.4f}"
        what = "overall score" if run.suite else "overall mean"
        overall = run.overall if run.suite else (run.sections[0].summary if len(run.sections) == 1 else None)
        lines.append(command("error", f"Grader Studio run {info.id} below threshold",
                             f"{what} {mean} is below --fail-under {verdict.fail_under:g}" + _interval(overall)))
    summaries = {section.key: section.summary for section in run.sections}
    for check in verdict.graders:  # one line per failing grader
        if not check.passed:
            mean = "none" if check.mean is None else f"{check.mean:.4f}"
            own = check.key in verdict.grader_thresholds
            option = f"--fail-under {check.key}={check.fail_under:g}" if own else f"--fail-under {check.fail_under:g}"
            lines.append(command("error", f"{check.key} below threshold",
                                 f"{check.key} v{check.version} mean {mean} is below {option} (run {info.id})"
                                 + _interval(summaries.get(check.key))))
    warnings: list[str] = []
    hidden = 0
    room = max_lines - len(lines)
    for section in run.sections:
        # how many from the run's one summary, the lines themselves a page in SQL: "+sample_idx"
        # reads them off the (run_id, status) index and sorts those alone, not a walk of every result
        count = section.counts["error"] + section.counts["invalid"]
        shown = 0
        if count and len(warnings) < room:
            for row in section_rows(library, info.id, section, order="+sample_idx", limit=room - len(warnings),
                                    extra=" AND status IN ('error', 'invalid')"):
                reason = first_line(row["error"]) or first_line(row["rationale"]) or row["status"]
                warnings.append(command("warning", f"{section.key}: {row['status']} result",
                                        f"sample {row['sample_id']}: {reason}"))
                shown += 1
        hidden += max(count - shown, 0)
    if hidden:  # the last line says how many were left out, within the cap
        hidden += 1
        warnings = warnings[: max(room - 1, 0)]
        warnings.append(command("warning", "more results not shown",
                                f"{hidden} more error or invalid result(s) not shown; "
                                f"see `grader-studio runs show {info.id} --failed`"))
    return (lines + warnings)[:max_lines]
