"""The grader-kind descriptor: what each kind declares about itself, once, as ``KIND = Kind(...)``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from studio.core.models import Sample


class GraderKind(Protocol):
    """What a grader kind declares about itself, once, in the module that implements it.

    ``KIND = Kind(...)`` in that module is all a new kind adds: the registry
    (``studio.core.graders.registry``) finds it, and the engine, the judge renderer, the designer,
    the variable palette and the starters read it.
    """

    kind: str
    label: str
    #: "module:function" building the kind's scorer, imported only when a run needs it
    scorer: str
    #: the fields of a small working definition ("New grader" starts from it)
    starter: dict[str, Any]
    #: the window's editor body: "function", "judge" (the designer body in the module of
    #: ``studio.ui.editor.bodies`` named after the kind), "form" or "yaml"
    editor: str

    @property
    def is_judge(self) -> bool: ...


@dataclass(frozen=True)
class Kind:
    """The plain ``GraderKind``; judge kinds fill in the prompt parts.

    ``preview(grader, sample)`` renders the exact prompts without a model call; ``default_templates``
    maps a judge's variant (e.g. a pre-built metric) to the (system, user) templates used when a
    definition brings none; ``variables`` are the template variables the kind adds to the sample's;
    ``sample_variables`` says whether its templates also see those.
    """

    kind: str
    label: str
    scorer: str
    starter: dict[str, Any] = field(default_factory=dict)
    preview: Callable[[Any, Sample], Any] | None = None
    default_templates: Callable[[str], tuple[str, str]] | None = None
    variables: tuple[tuple[str, str], ...] = ()
    sample_variables: bool = True
    editor: str = "yaml"

    @property
    def is_judge(self) -> bool:
        """A prompt judge: it has prompts to preview (external endpoints and composites do not)."""
        return self.preview is not None
