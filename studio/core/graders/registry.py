"""Builds scorers from the kind registry (``studio.core.kinds``): any module declaring ``KIND``.

Adding a kind is one new module declaring ``KIND = Kind(...)``; nothing here changes. Scorer modules
are imported only when a run needs them.
"""

from __future__ import annotations

import importlib

from studio.core.errors import StudioError
from studio.core.kinds import KIND_PACKAGES, GraderKind, UnknownKind, get_kind, kinds
from studio.core.models import GraderDefinition
from studio.core.scoring import GradingContext, Scorer, ScorerFactory

__all__ = ["KIND_PACKAGES", "GraderKind", "UnsupportedGrader", "factory_for", "get_kind", "kind_labels", "kinds", "make_scorer"]


class UnsupportedGrader(StudioError):
    pass


def factory_for(kind: str) -> ScorerFactory:
    try:
        module_name, attr = get_kind(kind).scorer.split(":")
    except UnknownKind as exc:
        raise UnsupportedGrader(f"no scorer for grader kind {kind!r}: {exc}") from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnsupportedGrader(f"grader kind {kind!r} cannot run yet ({exc})") from exc
    factory: ScorerFactory = getattr(module, attr)  # the kind's descriptor names its scorer factory
    return factory


def make_scorer(grader: GraderDefinition, ctx: GradingContext) -> Scorer:
    """The scorer of ``grader``; the lanes it takes are among those its kind declares (``Kind.lanes``),
    so the engine may call each of them directly."""
    scorer = factory_for(grader.kind)(grader, ctx)
    undeclared = set(scorer.lanes) - set(get_kind(grader.kind).lanes)
    if undeclared:
        raise TypeError(f"the {grader.kind} scorer takes lanes its kind does not declare: {', '.join(sorted(undeclared))}")
    return scorer


def kind_labels() -> dict[str, str]:
    """What the window calls each kind ("Binary judge"), in menu order."""
    return {name: kind.label for name, kind in kinds().items()}
