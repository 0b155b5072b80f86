"""The detail pane under the grid: one result's thread, the judge's rationale and prompt, the raw payload."""

from __future__ import annotations

import html
import json

from pydantic import ValidationError

from studio.core.json_types import JsonObject
from studio.core.models import Sample, Turn

from ..plain import breakable
from ..qt import Qt, QtGui, QtWidgets
from ..suites.detail import suite_has_judgement, suite_html
from .status import status_hex
from .thread_view import ThreadView, bubble, empty_html

#: verdicts that count as the good answer, whatever the judge kind calls them
GOOD_VERDICTS = {"PASS", "MET", "SUPPORTED", "RELEVANT", "YES", "TRUE", "FAITHFUL"}
_ITEM_KEYS = ("criterion", "claim", "statement", "context", "question", "item", "text")


def _verdict_lists(details: JsonObject) -> list[tuple[str, list[JsonObject]]]:
    """Per-criterion / per-claim verdicts: any list of dicts that carry a ``verdict``."""
    found = []
    for key, value in details.items():
        if key == "calls" or not isinstance(value, list) or not value:
            continue
        if all(isinstance(v, dict) and "verdict" in v for v in value):
            found.append((key, value))
    return found


def _verdict_table(name: str, rows: list[JsonObject]) -> str:
    item_key = next((k for k in _ITEM_KEYS if any(k in r for r in rows)), None)
    if item_key is None:
        item_key = next((k for k in rows[0] if k not in ("verdict", "reasoning", "ok", "met", "weight")), None)
    has_weight = any("weight" in r for r in rows)
    head = ["#", html.escape(item_key or "item"), "verdict"] + (["weight"] if has_weight else []) + ["reasoning"]
    out = [f"<p><b>{html.escape(name.replace('_', ' ').capitalize())}</b></p>",
           "<table cellpadding='4' cellspacing='0' border='1' style='border-collapse:collapse; border-color:#d0d4da'"
           " width='100%'><tr>" + "".join(f"<th align='left'>{h}</th>" for h in head) + "</tr>"]
    for n, row in enumerate(rows, 1):
        verdict = str(row.get("verdict") or "—")
        good = row.get("ok", row.get("met"))
        good = verdict.upper() in GOOD_VERDICTS if good is None else bool(good)
        colour = status_hex("ok" if good else "error") if row.get("verdict") else status_hex("skipped")
        cells = [str(n), html.escape(str(row.get(item_key, "")) if item_key else ""),
                 f"<span style='color:{colour}; font-weight:600'>{html.escape(verdict)}</span>"]
        if has_weight:
            weight = row.get("weight")
            cells.append("" if weight is None else f"{weight:+g}" if isinstance(weight, (int, float))
                         else html.escape(str(weight)))
        cells.append(f"<span style='white-space:pre-wrap'>{html.escape(str(row.get('reasoning') or ''))}</span>")
        out.append("<tr>" + "".join(f"<td valign='top'>{c}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _calls_html(calls: list[JsonObject]) -> str:
    out = []
    for n, call in enumerate(calls, 1):
        facts = [f"{call.get('latency_ms', 0):.0f} ms"] if call.get("latency_ms") is not None else []
        if call.get("cached"):
            facts.append("cached")
        if (call.get("attempts") or 1) > 1:
            facts.append(f"{call['attempts']} attempts")
        label = html.escape(str(call.get("label") or f"call {n}"))
        out.append(f"<p style='margin-top:12px'><b>Prompt — {label}</b> "
                   f"<span style='color:#8a8f98'>{html.escape(' · '.join(facts))}</span></p>")
        for message in call.get("messages") or []:
            content = message.get("content")
            if not isinstance(content, str):
                content = json.dumps(content, indent=2, ensure_ascii=False)
            out.append(bubble(str(message.get("role", "?")), content))
        if call.get("response") is not None:
            out.append(bubble("assistant", str(call["response"]), label="judge's answer"))
    return "".join(out)


def judge_html(result: JsonObject) -> str:
    """Rationale first (what an analyst reads), then the verdict tables, then the exact prompts; a
    suite run's sample: each grader's part, the judges first (ui/suites/detail.py)."""
    if result.get("graders"):
        return suite_html(result, judge_html)
    details = result.get("details") or {}
    parts = []
    if result.get("error"):
        parts.append(f"<p style='color:{status_hex('error')}; white-space:pre-wrap'><b>Error:</b> "
                     f"{html.escape(result['error'])}</p>")
    if result.get("rationale"):
        parts.append("<p><b>Rationale</b></p>"
                     f"<p style='white-space:pre-wrap'>{html.escape(result['rationale'])}</p>")
    for name, rows in _verdict_lists(details):
        parts.append(_verdict_table(name, rows))
    facts = {k: v for k, v in details.items()
             if k != "calls" and isinstance(v, (str, int, float, bool)) and v is not None}
    if facts:
        parts.append("<p style='color:#8a8f98'>" + " · ".join(
            f"{html.escape(str(k))}: <b>{html.escape(str(v))}</b>" for k, v in facts.items()) + "</p>")
    calls = details.get("calls") if isinstance(details.get("calls"), list) else []
    if calls:
        parts.append(_calls_html(calls))
    if not parts:
        return empty_html("This grader gave no rationale and made no judge calls.")
    return "".join(parts)


def has_judgement(result: JsonObject) -> bool:
    """A judge's result (a rationale, verdicts or judge calls): its rationale is what is read first."""
    if result.get("graders"):
        return suite_has_judgement(result)
    details = result.get("details") or {}
    return bool(result.get("rationale") or _verdict_lists(details) or details.get("calls"))


def header_html(result: JsonObject) -> str:
    score = result.get("score")
    status = result.get("status", "")
    bits = [f"<b>#{result.get('sample_idx')}</b> {html.escape(str(result.get('sample_id', '')))}",
            f"<span style='color:{status_hex(status)}; font-weight:600'>{html.escape(status)}</span>",
            f"score <b>{'—' if score is None else f'{score:.4g}'}</b>"]
    scores = {k: v for k, v in (result.get("scores") or {}).items() if k != "score"}
    if scores:
        bits.append(", ".join(f"{html.escape(k)} {v:.3g}" for k, v in scores.items() if isinstance(v, (int, float))))
    bits.append(f"{result.get('duration_ms') or 0:.0f} ms")
    tokens = (result.get("prompt_tokens") or 0) + (result.get("completion_tokens") or 0)
    if tokens:
        bits.append(f"{result.get('prompt_tokens', 0):,} + {result.get('completion_tokens', 0):,} tokens")
    if result.get("cached"):
        bits.append("cached")
    return " · ".join(bits)


def raw_json(result: JsonObject) -> str:
    shown = {k: v for k, v in result.items() if k not in ("sample_data", "run_id")}
    return json.dumps(shown, indent=2, ensure_ascii=False, default=str)


class DetailPane(QtWidgets.QWidget):
    """Shows one result (``set_result``) or an empty state; read-only, every text selectable."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = QtWidgets.QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)  # its markup is ours; data is escaped
        self.header.setTextInteractionFlags(self.header.textInteractionFlags()
                                            | Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self.thread_view = ThreadView(empty="Select a result to see its conversation.")
        self.judge = QtWidgets.QTextBrowser()
        self.judge.setOpenLinks(False)
        self.raw = QtWidgets.QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.NoWrap)
        self.raw.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.tabs.addTab(self.thread_view, "Thread")
        self.tabs.addTab(self.judge, "Rationale && prompt")
        self.tabs.addTab(self.raw, "Raw")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.tabs, 1)
        self.result: JsonObject | None = None
        self.clear()

    def clear(self, message: str = "Select a result to see its thread, rationale and raw payload.") -> None:
        self.result = None
        self.header.setText(f"<span style='color:#8a8f98'>{html.escape(breakable(message))}</span>")
        self.thread_view.clear_thread()
        self.judge.setHtml(empty_html("Select a result to see the judge's rationale."))
        self.raw.setPlainText("")

    def set_result(self, result: JsonObject | None) -> None:
        if result is None:
            self.clear("That result is no longer in the run.")
            return
        self.result = result
        self.header.setText(header_html(result))
        sample = _sample(result.get("sample_data"))
        if sample is not None:
            self.thread_view.set_sample(sample)
        else:
            self.thread_view.set_turns([Turn(role="system", content="The sample is not in the dataset any more.")])
        self.judge.setHtml(judge_html(result))
        self.raw.setPlainText(raw_json(result))
        if self.tabs.currentWidget() is not self.raw:  # Raw stays when chosen; else what matters first
            self.tabs.setCurrentWidget(self.judge if has_judgement(result) else self.thread_view)


def _sample(data: object) -> Sample | None:
    if not isinstance(data, dict):
        return None
    try:
        return Sample.model_validate(data)
    except ValidationError:
        return None
