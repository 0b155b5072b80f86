"""The grader definition: a discriminated union over every kind, composites and juries included."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from .common import GraderBase
from .function import FunctionGrader
from .javascript import JavascriptGrader
from .judges import (
    BinaryJudge,
    CriteriaJudge,
    JudgeBase,
    LetterJudge,
    PrebuiltJudge,
    RangeJudge,
    RubricJudge,
)
from .panels import PairwiseJudge
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


JuryAggregation = Literal["majority", "mean", "min", "weighted"]


class Juror(BaseModel):
    """One judge of a jury, with its own endpoint and model (set on its grader definition)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    weight: float = Field(default=1.0, gt=0)
    grader: GraderDefinition

    @property
    def label(self) -> str:
        return self.name or self.grader.key

    @model_validator(mode="after")
    def _a_single_judge(self) -> Juror:
        if not isinstance(self.grader, JudgeBase) or isinstance(self.grader, PairwiseJudge):
            raise ValueError(f"juror {self.label!r} is a {self.grader.kind}; a juror is a prompt judge "
                             "(binary, range, rubric, criteria, letter or pre-built)")
        return self


class JuryGrader(GraderBase):
    """Several judges grade each sample concurrently; their scores are aggregated.

    ``majority``: each juror's verdict is pass when its score reaches ``threshold``; the sample
    scores 1 when more jurors pass than fail, 0 when fewer, 0.5 on a tie (marked as one).
    ``mean``/``min``/``weighted`` combine the scores. A juror that fails is marked on the sample;
    the sample fails only when fewer than ``quorum`` jurors answered (default: a strict majority).
    """

    kind: Literal["jury"] = "jury"
    aggregation: JuryAggregation = "majority"
    threshold: float = 0.5
    quorum: int | None = Field(default=None, ge=1)
    jurors: list[Juror] = Field(min_length=2)

    @model_validator(mode="after")
    def _check_quorum(self) -> JuryGrader:
        if self.quorum is not None and self.quorum > len(self.jurors):
            raise ValueError(f"quorum {self.quorum} is more than the {len(self.jurors)} jurors")
        return self

    @property
    def needed(self) -> int:
        """Jurors that must answer for a sample to be graded."""
        return self.quorum if self.quorum is not None else len(self.jurors) // 2 + 1

    def juror_names(self) -> list[str]:
        """Unique names, in order (a repeated name gets ``-2``, ``-3``)."""
        seen: dict[str, int] = {}
        out = []
        for juror in self.jurors:
            base = juror.label
            seen[base] = seen.get(base, 0) + 1
            out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
        return out


GraderDefinition = Annotated[
    FunctionGrader | BinaryJudge | RangeJudge | RubricJudge | CriteriaJudge | LetterJudge | PrebuiltJudge | PairwiseJudge | ExternalEndpoint | BashGrader | BuiltinGrader | CompositeGrader | JuryGrader | JavascriptGrader,
    Field(discriminator="kind"),
]

Component.model_rebuild()
CompositeGrader.model_rebuild()
Juror.model_rebuild()
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
