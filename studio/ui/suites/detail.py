"""The detail pane of a suite run's sample: each grader's score and rationale, the judges first.

The results pane's own renderer draws each grader's part (``judge_html`` is passed in, so this module
does not import the pane that imports it); every text is escaped: graders and judges write plain text.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any


def _judged(entry: dict[str, Any]) -> bool:
    details = entry.get("details") or {}
    return bool(entry.get("rationale") or details.get("calls"))


def ordered(graders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The judges (a rationale or judge calls) first, then the other graders, each group in suite order."""
    return [g for g in graders if _judged(g)] + [g for g in graders if not _judged(g)]


def suite_html(result: dict[str, Any], judge_html: Callable[[dict[str, Any]], str]) -> str:
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
        if _judged(entry) or entry.get("error"):
            parts.append(judge_html(entry))
    return "".join(parts)


def suite_has_judgement(result: dict[str, Any]) -> bool:
    return any(_judged(g) for g in result.get("graders") or [])
