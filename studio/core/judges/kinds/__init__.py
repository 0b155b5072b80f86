"""One module per judge kind, named after it, each declaring ``KIND`` (see ``studio.core.kinds.Kind``).

A module here defines the kind's prompts, ``preview`` and how it reads the model's answer; nothing
else lists the judge kinds: ``prompt_judges`` finds them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType


@cache
def prompt_judges() -> dict[str, ModuleType]:
    """The prompt judges' modules by kind (those whose ``KIND`` has a preview)."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None and kind.is_judge:
            found[kind.kind] = module
    return found
