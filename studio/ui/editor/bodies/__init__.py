"""One editor body per kind of definition form; ``make_body`` picks it from the kind's descriptor.

A kind names its body in ``KIND.editor`` (``studio.core.kinds.Kind``): "function" (the code editor),
"judge" (the judge designer), "form" (generated fields) or "yaml" (the definition as YAML).
"""

from __future__ import annotations

from studio.core.graders.registry import get_kind

from ...context import AppContext
from ..body import DefinitionBody


def make_body(ctx: AppContext, kind: str, theme: str) -> DefinitionBody:
    editor = get_kind(kind).editor
    if editor == "function":
        from .function import FunctionBody

        return FunctionBody(theme)
    if editor == "judge":
        from .judge import JudgeBody

        return JudgeBody(ctx, kind, theme)
    from .forms import FormBody, YamlBody

    return FormBody(kind) if editor == "form" else YamlBody(theme)
