"""Finds the platform modules: any module in this package with a ``PLATFORM`` instance.

Adding a platform is one new file defining ``PLATFORM = MyPlatform()``; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path
from typing import TypeVar

from ._base import Platform, PlatformError
from ._syntax import refuse_unreadable

P = TypeVar("P", bound=Platform)


@cache
def platforms() -> dict[str, Platform]:
    """Every platform by name, in a stable order."""
    found: dict[str, Platform] = {}
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name == "registry" or info.name.startswith("_"):  # helpers start with "_"
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        platform = getattr(module, "PLATFORM", None)
        if isinstance(platform, Platform):
            found[platform.name] = platform
    return found


def get_platform(name: str) -> Platform:
    try:
        return platforms()[name.lower()]
    except KeyError:
        raise PlatformError(f"unknown platform {name!r}; known: {', '.join(platforms())}") from None


def platform_of(name: str, kind: type[P]) -> P:
    """A built-in platform as its own class, for an exporter that calls what only that class has
    (the eval exporter building a promptfoo config or a Letta suite); a plugin that took over the
    name with another class is a bug here, said as one."""
    platform = get_platform(name)
    if not isinstance(platform, kind):
        raise TypeError(f"platform {name!r} is a {type(platform).__name__}, not a {kind.__name__}")
    return platform


def detect_platform(path: Path) -> Platform:
    """The platform whose importer recognises ``path``; refuses when none or several do."""
    matches = [p for p in platforms().values() if p.imports and p.detect(path)]
    if not matches:
        refuse_unreadable(path)
        raise PlatformError(
            f"cannot tell which platform {path.name} is from; pass --from "
            f"({', '.join(p.name for p in platforms().values() if p.imports)})"
        )
    if len(matches) > 1:
        names = ", ".join(p.name for p in matches)
        raise PlatformError(f"{path.name} could be from {names}; pass --from to choose")
    return matches[0]
