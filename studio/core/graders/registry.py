"""Which module scores which grader kind: one line per kind, imported only when used."""

from __future__ import annotations

import importlib

from studio.core.models import GraderDefinition
from studio.core.scoring import GradingContext, Scorer, ScorerFactory

_FACTORIES: dict[str, str] = {
    "function": "studio.core.graders.function:make_scorer",
    "binary_judge": "studio.core.judges.scorer:make_scorer",
    "range_judge": "studio.core.judges.scorer:make_scorer",
    "rubric_judge": "studio.core.judges.scorer:make_scorer",
    "criteria_judge": "studio.core.judges.scorer:make_scorer",
    "prebuilt": "studio.core.judges.scorer:make_scorer",
    "external_endpoint": "studio.core.judges.external:make_scorer",
    "builtin": "studio.core.graders.builtin:make_scorer",
    "bash": "studio.core.graders.bash:make_scorer",
    "composite": "studio.core.graders.composite:make_scorer",
}


class UnsupportedGrader(Exception):
    pass


def factory_for(kind: str) -> ScorerFactory:
    target = _FACTORIES.get(kind)
    if target is None:
        raise UnsupportedGrader(f"no scorer for grader kind {kind!r}")
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnsupportedGrader(f"grader kind {kind!r} cannot run yet ({exc})") from exc
    return getattr(module, attr)


def make_scorer(grader: GraderDefinition, ctx: GradingContext) -> Scorer:
    return factory_for(grader.kind)(grader, ctx)
