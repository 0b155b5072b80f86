"""``render_prompt``: the exact messages a judge would send for one sample, without calling a model.

Pure and fast (templates are compiled once and cached) so the window can re-render on every
keystroke. Raises ``TemplateError``/``UnknownVariable`` with a message naming what is wrong.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from studio.core.judges.http.chat import ChatMessage, user
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.kinds import prompt_judges
from studio.core.judges.variables import extracted_completion
from studio.core.models import CompositeGrader, ExternalEndpoint, GraderBase, JuryGrader, Sample


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


def render_prompt(grader: GraderBase, sample: Sample) -> RenderedPrompt:
    kind = getattr(grader, "kind", "")
    if isinstance(grader, ExternalEndpoint):
        from studio.core.judges.external import score_payload

        completion = extracted_completion(grader, sample) if grader.extractor else None
        body = json.dumps(score_payload(sample, completion), indent=2, ensure_ascii=False)
        call = RenderedCall(label=f"POST {grader.url.rstrip('/')}/score", messages=[user(body)])
        return RenderedPrompt(
            kind=kind, calls=[call], notes=["a reward server receives JSON, not a prompt"]
        )
    if isinstance(grader, CompositeGrader):
        return _render_composite(grader, sample)
    if isinstance(grader, JuryGrader):  # every juror's calls, labelled with the juror
        calls = [call.model_copy(update={"label": f"{name}: {call.label}"})
                 for name, juror in zip(grader.juror_names(), grader.jurors, strict=True)
                 for call in render_prompt(juror.grader, sample).calls]
        return RenderedPrompt(kind=grader.kind, calls=calls,
                              notes=[f"the jurors are asked concurrently; {grader.aggregation} decides"])
    module = prompt_judges().get(kind)
    if module is None:
        raise JudgeError(f"a {kind or type(grader).__name__} grader has no judge prompt to render")
    return module.preview(grader, sample)


def _render_composite(grader: CompositeGrader, sample: Sample) -> RenderedPrompt:
    """Every judge inside a composite, each call labelled with its component."""
    calls: list[RenderedCall] = []
    notes: list[str] = []
    for component in grader.components:
        inner = component.grader
        if inner.kind not in prompt_judges() and not isinstance(
            inner, (ExternalEndpoint, CompositeGrader)
        ):
            continue
        rendered = render_prompt(inner, sample)
        for call in rendered.calls:
            calls.append(call.model_copy(update={"label": f"{component.label}: {call.label}"}))
        notes.extend(f"{component.label}: {note}" for note in rendered.notes)
    if not calls:
        raise JudgeError("this composite grader has no judge inside: there is no prompt to render")
    return RenderedPrompt(kind=grader.kind, calls=calls, notes=notes)
