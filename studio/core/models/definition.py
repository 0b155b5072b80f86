"""The grader definition: a discriminated union over every kind, composites included."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .common import GraderBase
from .function import FunctionGrader
from .javascript import JavascriptGrader
from .judges import BinaryJudge, CriteriaJudge, LetterJudge, PrebuiltJudge, RangeJudge, RubricJudge
from .panels import Juror, JuryGrader, PairwiseJudge
from .rules import BashGrader, BuiltinGrader, ExternalEndpoint


class Component(BaseModel):
    """One sub-grader of a composite; a negative weight makes it a penalty (HUD's rule)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    weight: float = 1.0
    grader: GraderDefinition

    @property
    def label(self) -> str:
        return self.name or self.grader.metric.key or self.grader.key


class CompositeGrader(GraderBase):
    """Combines sub-grader scores: ``weighted`` (HUD combine), ``any`` (max) or ``all`` (min)."""

    kind: Literal["composite"] = "composite"
    mode: Literal["weighted", "any", "all"] = "weighted"
    components: list[Component] = Field(min_length=1)


GraderDefinition = Annotated[
    FunctionGrader | BinaryJudge | RangeJudge | RubricJudge | CriteriaJudge | LetterJudge | PrebuiltJudge | PairwiseJudge | ExternalEndpoint | BashGrader | BuiltinGrader | CompositeGrader | JuryGrader | JavascriptGrader,
    Field(discriminator="kind"),
]

Component.model_rebuild()
CompositeGrader.model_rebuild()
Juror.model_rebuild(_types_namespace={"GraderDefinition": GraderDefinition})
JuryGrader.model_rebuild()

GRADER_ADAPTER: TypeAdapter[GraderDefinition] = TypeAdapter(GraderDefinition)

#: every kind, in the union's order (the window's menus and library groups follow it); what a kind
#: is called and how it scores is declared by its own module (``studio.core.graders.registry``)
GRADER_KINDS: tuple[str, ...] = tuple(
    member.model_fields["kind"].default for member in get_args(get_args(GraderDefinition)[0])
)


def parse_grader(data: object) -> GraderDefinition:
    """Validate a plain dict (from YAML/JSON/DB) into the right definition class."""
    return GRADER_ADAPTER.validate_python(data)


def dump_grader(grader: GraderBase) -> dict[str, Any]:
    """Plain JSON-able dict, defaults omitted so files stay short and diffs readable.

    ``kind`` is always written (first, for readers), nested composite components included.
    """
    data: dict[str, Any] = {"kind": grader.kind}  # type: ignore[attr-defined]
    data.update(grader.model_dump(mode="json", exclude_defaults=True))
    if isinstance(grader, CompositeGrader):
        for i, component in enumerate(grader.components):
            data["components"][i]["grader"] = dump_grader(component.grader)
    if isinstance(grader, JuryGrader):
        for i, juror in enumerate(grader.jurors):
            data["jurors"][i]["grader"] = dump_grader(juror.grader)
    return data
