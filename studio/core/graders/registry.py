"""Finds the grader kinds: any module in the kind packages with a ``KIND`` (``studio.core.kinds.Kind``).

Adding a kind is one new module declaring ``KIND = Kind(...)`` (plus its definition model in
``studio.core.models``); nothing here changes. Scorer modules are imported only when a run needs them.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache

from studio.core.errors import StudioError
from studio.core.kinds import GraderKind
from studio.core.models import GRADER_KINDS, GraderDefinition
from studio.core.scoring import GradingContext, Scorer, ScorerFactory

#: where kind modules live: prompt judges, other graders reached over HTTP, graders run here
KIND_PACKAGES = ("studio.core.judges.kinds", "studio.core.judges", "studio.core.graders")


class UnsupportedGrader(StudioError):
    pass


@cache
def kinds() -> dict[str, GraderKind]:
    """Every grader kind by name, in the order of ``GRADER_KINDS`` (menus, library groups)."""
    found: dict[str, GraderKind] = {}
    for package_name in KIND_PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.ispkg or info.name.startswith("_") or info.name == "registry":
                continue
            module = importlib.import_module(f"{package_name}.{info.name}")
            kind = getattr(module, "KIND", None)
            if kind is not None:
                found[kind.kind] = kind
    order = {name: i for i, name in enumerate(GRADER_KINDS)}
    return dict(sorted(found.items(), key=lambda item: order.get(item[0], len(order))))


@cache
def _named(kind: str) -> GraderKind | None:
    """The kind declared by the module named after it, if one is (most are: ``function`` is
    ``studio.core.graders.function``): a run of a function grader then imports neither the judges
    nor the HTTP client, which ``kinds()`` would (0.2-0.8 s of a run's start-up)."""
    if not kind.isidentifier():
        return None
    for package_name in KIND_PACKAGES:
        name = f"{package_name}.{kind}"
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            declared = getattr(importlib.import_module(name), "KIND", None)
            if declared is not None and declared.kind == kind:
                return declared
    return None


def get_kind(kind: str) -> GraderKind:
    """One kind's descriptor: from its own module when it is named after the kind, else from the
    full scan (``kinds()``)."""
    named = _named(kind)
    if named is not None:
        return named
    try:
        return kinds()[kind]
    except KeyError:
        raise UnsupportedGrader(f"no scorer for grader kind {kind!r}") from None


def factory_for(kind: str) -> ScorerFactory:
    module_name, attr = get_kind(kind).scorer.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnsupportedGrader(f"grader kind {kind!r} cannot run yet ({exc})") from exc
    return getattr(module, attr)


def make_scorer(grader: GraderDefinition, ctx: GradingContext) -> Scorer:
    return factory_for(grader.kind)(grader, ctx)


def kind_labels() -> dict[str, str]:
    """What the window calls each kind ("Binary judge"), in menu order."""
    return {name: kind.label for name, kind in kinds().items()}
