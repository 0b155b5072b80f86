"""One editor body per kind of definition form; ``make_body`` picks it from the kind's descriptor.

A kind names its body in ``KIND.editor`` (``studio.core.kinds.Kind``): "function" (the code editor),
"judge" (the judge designer), "form" (generated fields) or "yaml" (the definition as YAML). A judge
kind's designer is the class ``KIND.body`` names ("module:attribute"), a ``JudgeBody`` subclass; by
default the ``BODY`` of the module here named after the kind (``binary_judge.py``...): a new judge kind
adds that one module (or names its own, outside the studio), and no list here changes.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, cast

from studio.core.graders.registry import get_kind

from ...context import AppContext
from ..body import DefinitionBody

if TYPE_CHECKING:
    from .judge import JudgeBody


def _body(module: str, name: str = "BODY") -> Callable[..., DefinitionBody]:
    """The body class ``name`` of ``module`` here, imported when a page first needs it."""
    return cast("Callable[..., DefinitionBody]", getattr(import_module(f".{module}", __package__), name))


def judge_body(kind: str) -> type[JudgeBody]:
    """The designer body class a judge kind declares (``KIND.body``, "module:attribute")."""
    module, _, name = get_kind(kind).body.partition(":")
    return cast("type[JudgeBody]", getattr(import_module(module), name or "BODY"))


#: KIND.editor -> how its body is made from (context, kind, theme)
_EDITORS: dict[str, Callable[[AppContext, str, str], DefinitionBody]] = {
    "function": lambda ctx, kind, theme: _body("function", "FunctionBody")(theme),
    "judge": lambda ctx, kind, theme: judge_body(kind)(ctx, kind, theme),
    "form": lambda ctx, kind, theme: _body("forms", "FormBody")(kind),
    "yaml": lambda ctx, kind, theme: _body("forms", "YamlBody")(theme),
}


def make_body(ctx: AppContext, kind: str, theme: str) -> DefinitionBody:
    return _EDITORS[get_kind(kind).editor](ctx, kind, theme)
