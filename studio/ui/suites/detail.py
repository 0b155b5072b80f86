"""The detail pane of a suite run's sample: each grader's score and rationale, the judges first.

The results pane's own renderer draws each grader's part (``judge_html`` is passed in, so this module
does not import the pane that imports it); every text is escaped: graders and judges write plain text.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from studio.core.json_types import JsonObject
from studio.core.store.results_query import judged, judges_first


def ordered(graders: list[JsonObject]) -> list[JsonObject]:
    """The judges first, then the other graders, each group in suite order (``judges_first``)."""
    return judges_first(graders)


def suite_html(result: JsonObject, judge_html: Callable[[JsonObject], str]) -> str:
    parts = []
    overall = result.get("score")
    parts.append("<p><b>Overall</b> " + ("—" if overall is None else f"{overall:.4g}")
                 + f" <span style='color:#8a8f98'>({html.escape(str(result.get('status', '')))})</span></p>")
    for entry in ordered(result.get("graders") or []):
        score = entry.get("score")
        status = str(entry.get("status", ""))
        shown = "—" if score is None else f"{score:.4g}"
        parts.append(f"<h4 style='margin-top:14px'>{html.escape(str(entry['grader']))} v{entry.get('version')}: "
                     f"{shown} <span style='color:#8a8f98'>{html.escape(status)}</span></h4>")
        if judged(entry) or entry.get("error"):
            parts.append(judge_html(entry))
    return "".join(parts)


def suite_has_judgement(result: JsonObject) -> bool:
    return any(judged(g) for g in result.get("graders") or [])
