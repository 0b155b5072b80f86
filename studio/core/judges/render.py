"""``render_prompt``: the exact messages a judge would send for one sample, without calling a model.

Pure and fast (templates are compiled once and cached) so the window can re-render on every
keystroke. Raises ``TemplateError``/``UnknownVariable`` with a message naming what is wrong.
"""

from __future__ import annotations

import json
from types import ModuleType

from studio.core.judges.http.chat import user
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.kinds import binary_judge as binary
from studio.core.judges.kinds import criteria_judge as criteria
from studio.core.judges.kinds import prebuilt, range_judge
from studio.core.judges.kinds import rubric_judge as rubric
from studio.core.judges.rendered import RenderedCall, RenderedPrompt
from studio.core.judges.variables import extracted_completion
from studio.core.models import CompositeGrader, ExternalEndpoint, GraderBase, Sample

KIND_MODULES: dict[str, ModuleType] = {
    "binary_judge": binary,
    "range_judge": range_judge,
    "rubric_judge": rubric,
    "criteria_judge": criteria,
    "prebuilt": prebuilt,
}


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
    module = KIND_MODULES.get(kind)
    if module is None:
        raise JudgeError(f"a {kind or type(grader).__name__} grader has no judge prompt to render")
    return module.preview(grader, sample)


def _render_composite(grader: CompositeGrader, sample: Sample) -> RenderedPrompt:
    """Every judge inside a composite, each call labelled with its component."""
    calls: list[RenderedCall] = []
    notes: list[str] = []
    for component in grader.components:
        inner = component.grader
        if inner.kind not in KIND_MODULES and not isinstance(
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
