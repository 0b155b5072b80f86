"""Conversations as chat bubbles: the one renderer for dataset samples, results and judge prompts.

Qt's rich text (a read-only ``QTextBrowser``) rather than a widget per turn: a thread of 200 turns
or a 100 KB document is one layout pass, the text stays selectable and searchable, and the same
HTML serves the judge's prompt in the detail pane. Bubbles carry their own light fill and dark
text, so they read the same in a light or a dark theme.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping

from studio.core.models import Sample, Turn

from ..qt import QtGui, QtWidgets

MAX_TURN_CHARS = 20_000  # beyond this a turn is cut, with a note; the raw tab has everything

#: role -> (label colour, bubble fill, right-aligned)
ROLE_STYLES: dict[str, tuple[str, str, bool]] = {
    "system": ("#5b6170", "#eef0f3", False),
    "user": ("#2f5fa8", "#e6effc", False),
    "assistant": ("#23804a", "#e7f6ec", True),
    "document": ("#97620c", "#fdf3df", False),
    "tool": ("#6b4aa8", "#f0ebfa", False),
    "expected": ("#7a5b00", "#fff8d6", True),
}
_DEFAULT_STYLE = ("#5b6170", "#f2f2f2", False)
_TEXT = "#1d2026"


def _text(content: str) -> str:
    if len(content) > MAX_TURN_CHARS:
        cut = len(content) - MAX_TURN_CHARS
        content = content[:MAX_TURN_CHARS] + f"\n… ({cut:,} more characters: see Raw)"
    return html.escape(content)


def _pretty_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def bubble(role: str, content: str, *, label: str | None = None,
           tool_calls: Iterable[Mapping[str, object]] = (), note: str = "") -> str:
    """One turn as an HTML bubble (a one-cell table: the layout Qt's rich text does well)."""
    colour, fill, right = ROLE_STYLES.get(role, _DEFAULT_STYLE)
    title = html.escape(label or role)
    if note:
        title += f" <span style='color:#8a8f98; font-weight:normal'>· {html.escape(note)}</span>"
    parts = [f"<div style='color:{colour}; font-weight:600; font-size:small'>{title}</div>"]
    if content:
        parts.append(f"<div style='white-space:pre-wrap; color:{_TEXT}'>{_text(content)}</div>")
    elif not tool_calls:
        parts.append("<div style='color:#8a8f98'><i>(empty)</i></div>")
    for call in tool_calls:
        name = html.escape(str(call.get("name", "?")))
        args = html.escape(_pretty_arguments(str(call.get("arguments", "{}"))))
        call_id = f" <span style='color:#8a8f98'>[{html.escape(str(call['id']))}]</span>" if call.get("id") else ""
        parts.append(
            f"<div style='color:{colour}; margin-top:4px'>→ tool call <b>{name}</b>{call_id}</div>"
            f"<pre style='color:{_TEXT}; margin:0'>{args}</pre>"
        )
    align = "right" if right else "left"
    return (
        f"<table width='88%' align='{align}' cellpadding='8' cellspacing='0' bgcolor='{fill}'"
        f" style='margin-bottom:8px; border:1px solid #d0d4da'><tr><td>{''.join(parts)}</td></tr></table>"
        "<br clear='all'/>"
    )


def turn_html(turn: Turn, number: int | None = None) -> str:
    note_parts = []
    if turn.name:
        note_parts.append(turn.name)
    if turn.tool_call_id:
        note_parts.append(f"reply to {turn.tool_call_id}")
    label = turn.role
    if number is not None and turn.role == "document":
        label = f"document {number}"
    return bubble(turn.role, turn.content, label=label, note=" · ".join(note_parts),
                  tool_calls=[c.model_dump() for c in turn.tool_calls])


def turns_html(turns: Iterable[Turn]) -> str:
    out = []
    documents = 0
    for turn in turns:
        if turn.role == "document":
            documents += 1
            out.append(turn_html(turn, documents))
        else:
            out.append(turn_html(turn))
    return "".join(out)


def sample_html(sample: Sample) -> str:
    """The sample's input turns, its completion (the graded answer) and its expected answer."""
    parts = [turns_html(sample.messages)]
    if sample.completion is not None:
        parts.append(bubble("assistant", sample.completion, label="assistant · completion"))
    elif not sample.messages:
        parts.append(empty_html("This sample has no turns."))
    if sample.expected is not None:
        parts.append(bubble("expected", sample.expected, label="expected"))
    if sample.metadata:
        meta = json.dumps(sample.metadata, indent=2, ensure_ascii=False, default=str)
        parts.append(f"<p style='color:#8a8f98; font-size:small'>metadata</p><pre>{html.escape(meta[:5000])}</pre>")
    return "".join(parts)


def empty_html(message: str) -> str:
    return f"<p align='center' style='color:#8a8f98; margin-top:24px'>{html.escape(message)}</p>"


class ThreadView(QtWidgets.QTextBrowser):
    """A read-only, selectable view of one conversation."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, empty: str = "Nothing selected.") -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(False)
        self.setOpenLinks(False)
        self.setReadOnly(True)
        self.document().setDocumentMargin(10)
        self._empty = empty
        self.clear_thread()

    def clear_thread(self, message: str | None = None) -> None:
        self.setHtml(empty_html(message or self._empty))

    def set_sample(self, sample: Sample | None) -> None:
        if sample is None:
            self.clear_thread()
            return
        self.setHtml(sample_html(sample))
        self.moveCursor(QtGui.QTextCursor.MoveOperation.Start)

    def set_turns(self, turns: Iterable[Turn]) -> None:
        body = turns_html(turns)
        self.setHtml(body or empty_html("This thread has no turns."))
        self.moveCursor(QtGui.QTextCursor.MoveOperation.Start)
