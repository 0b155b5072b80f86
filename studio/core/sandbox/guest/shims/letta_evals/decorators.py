"""``@grader`` marks a custom tool grader; the worker finds the function by this mark."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

GRADERS: dict[str, Callable[..., object]] = {}
EXTRACTORS: dict[str, Callable[..., object]] = {}


def grader(fn: F | None = None, *, name: str | None = None) -> F | Callable[[F], F]:
    def mark(f: F) -> F:
        f.__letta_grader__ = True  # type: ignore[attr-defined]
        GRADERS[name or f.__name__] = f
        return f

    return mark(fn) if fn is not None else mark


def extractor(fn: F | None = None, *, name: str | None = None) -> F | Callable[[F], F]:
    def mark(f: F) -> F:
        EXTRACTORS[name or f.__name__] = f
        return f

    return mark(fn) if fn is not None else mark
