"""LLM judges: endpoints, the async client (limits, retries, cache), templates, one module per kind.

Public entry points: ``render_prompt`` (exact prompts, no model call), ``make_scorer`` in
``scorer``/``external`` (the engine's), ``make_model_bridge`` (MKA1 ctx model calls).
Sub-packages: ``http`` (reaching a model server), ``kinds`` (one module per
judge kind). The scripted fake judge is a product feature and lives in ``studio.core.demo``.
Imports are lazy so ``import studio.core.judges`` stays cheap for the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bridge import make_model_bridge as make_model_bridge
    from .render import RenderedPrompt as RenderedPrompt
    from .render import render_prompt as render_prompt

_EXPORTS = {
    "RenderedPrompt": "render",
    "render_prompt": "render",
    "make_model_bridge": "bridge",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
