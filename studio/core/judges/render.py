"""``render_prompt``: the exact messages a judge would send for one sample, without calling a model.

Pure and fast (templates are compiled once and cached) so the window can re-render on every
keystroke. Raises ``TemplateError``/``UnknownVariable`` with a message naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from studio.core.judges.http.chat import ChatMessage
from studio.core.judges.http.errors import JudgeError
from studio.core.kinds import get_kind
from studio.core.models import GraderBase, Sample


class RenderedCall(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    label: str
    messages: list[ChatMessage]
    note: str = Field(default="", description="why this call's text may differ at run time")


class RenderedPrompt(BaseModel):
    """Calls in the order the judge makes them; ``messages`` is the main judgement call."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    kind: str
    calls: list[RenderedCall]
    main: int = 0
    notes: list[str] = Field(default_factory=list)

    @property
    def messages(self) -> list[ChatMessage]:
        return self.calls[self.main].messages if self.calls else []

    def text(self) -> str:
        """Plain text for a terminal: each call, each message under a role header."""
        out: list[str] = []
        for n, call in enumerate(self.calls, 1):
            title = f"=== call {n}/{len(self.calls)}: {call.label} ==="
            out.append(title)
            if call.note:
                out.append(f"({call.note})")
            for message in call.messages:
                out.append(f"--- {message.role} ---")
                out.append(message.content)
            out.append("")
        out.extend(f"note: {note}" for note in self.notes)
        return "\n".join(out).rstrip() + "\n"


def _renderer(grader: GraderBase) -> Callable[[GraderBase, Sample], object] | None:
    """How the grader's kind renders its calls: a prompt judge's ``preview``, else the kind's
    ``render`` (a reward server's request, a composite's or a jury's parts'), else None."""
    kind = get_kind(grader.kind)
    return kind.preview or kind.render


def render_prompt(grader: GraderBase, sample: Sample) -> RenderedPrompt:
    show = _renderer(grader)
    if show is None:
        raise JudgeError(f"a {grader.kind} grader has no judge prompt to render")
    rendered = show(grader, sample)
    if not isinstance(rendered, RenderedPrompt):
        raise TypeError(f"the {grader.kind} kind's renderer returned {type(rendered).__name__}, not a RenderedPrompt")
    return rendered


def render_parts(grader: GraderBase, labels: Sequence[str], sample: Sample, notes: Sequence[str] = ()) -> RenderedPrompt:
    """The calls of every part of a grader that combines others (``GraderBase.parts``), each
    labelled with its part's label; a part that calls nothing (a built-in check) is left out."""
    calls: list[RenderedCall] = []
    said = list(notes)
    for label, part in zip(labels, grader.parts(), strict=True):
        if _renderer(part) is None:
            continue
        rendered = render_prompt(part, sample)
        calls.extend(call.model_copy(update={"label": f"{label}: {call.label}"}) for call in rendered.calls)
        said.extend(f"{label}: {note}" for note in rendered.notes)
    if not calls:
        raise JudgeError(f"this {grader.kind} grader has no judge inside: there is no prompt to render")
    return RenderedPrompt(kind=grader.kind, calls=calls, notes=said)
