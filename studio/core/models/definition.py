"""The grader definition: an open union over every kind the registry knows, composites included.

No list of kinds lives here: ``GraderDefinition`` (``union.py``) validates a mapping into the model
its ``kind``'s descriptor declares (``studio.core.kinds``, ``Kind.model``), so a kind declared in its
own module, or in a package registered under the ``grader_studio.kinds`` entry point, is a definition
like any other. This module adds the composite, parsing and dumping, and the definition file's schema.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from studio.core.json_types import JsonObject, JsonValue

from .common import STORED, GraderBase
from .union import _PLACEHOLDER, UNION_REF, GraderDefinition, _registry


class Component(BaseModel):
    """One sub-grader of a composite; a negative weight makes it a penalty (HUD's rule)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str | None = None
    weight: float = 1.0
    grader: GraderDefinition

    @property
    def label(self) -> str:
        return self.name or self.grader.metric.key or self.grader.key


class CompositeGrader(GraderBase):
    """Combines sub-grader scores: ``weighted`` (HUD combine), ``any`` (max) or ``all`` (min)."""

    kind: Literal["composite"] = "composite"
    PARTS_FIELD: ClassVar[str | None] = "components"

    def score_bounds(self) -> tuple[float, float] | None:
        """``any``/``all`` stay within its parts' scores; a weighted one reaches its penalties' sum below 0."""
        parts = [c.grader.score_bounds() for c in self.components]
        if any(p is None for p in parts):
            return None
        if self.mode in ("any", "all"):
            return min(p[0] for p in parts if p), max(p[1] for p in parts if p)
        penalty = sum(c.weight for c in self.components if c.weight < 0)
        return min(0.0, penalty), 1.0
    mode: Literal["weighted", "any", "all"] = "weighted"
    components: list[Component] = Field(min_length=1)


# no model_rebuild() here: both are defer_build, so pydantic builds them (resolving the forward
# reference to GraderDefinition from this module) when a composite is first validated; a run of
# another kind never builds them (issue 32: ~0.04 s CPU before a judge run's first call)
GRADER_ADAPTER: TypeAdapter[GraderDefinition] = TypeAdapter(GraderDefinition)



def union_json_schema() -> JsonObject:
    """Every declared kind's definition schema (``$defs``) and the union of them (``oneOf`` keyed by
    ``kind``), for a definition file's JSON schema."""
    defs: JsonObject = {}
    branches = []
    for kind in _registry().kinds().values():
        branch = kind.model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(branch.pop("$defs", {}))
        defs[kind.model.__name__] = branch
        branches.append({"$ref": f"#/$defs/{kind.model.__name__}"})
    union = {"oneOf": branches, "discriminator": {"propertyName": "kind"}}
    defs = _pointed(defs)
    defs[UNION_REF.rsplit("/", 1)[1]] = union  # where nested definitions (components, jurors) point
    return {**union, "$defs": defs}


def _pointed(schema: JsonValue) -> JsonValue:

    """``schema`` with each nested definition's placeholder replaced by a reference to the union."""
    if isinstance(schema, dict):
        if schema.get(_PLACEHOLDER):
            return {"$ref": UNION_REF}
        return {key: _pointed(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_pointed(value) for value in schema]
    return schema


def parse_grader(data: object, *, stored: bool = False) -> GraderDefinition:
    """Validate a plain dict (from YAML/JSON/DB) into the right definition class. ``stored``: read
    back from the library, where a rule newer than the row is reported by ``problems()``, not raised."""
    return GRADER_ADAPTER.validate_python(data, context=STORED if stored else None)


def dump_grader(grader: GraderBase) -> JsonObject:
    """Plain JSON-able dict, defaults omitted so files stay short and diffs readable.

    ``kind`` is always written (first, for readers), nested composite components included.
    """
    data: JsonObject = {"kind": grader.kind}
    data.update(grader.model_dump(mode="json", exclude_defaults=True))
    if grader.PARTS_FIELD is not None:
        for i, part in enumerate(grader.parts()):
            data[grader.PARTS_FIELD][i]["grader"] = dump_grader(part)
    return data
