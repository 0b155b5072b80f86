"""``GraderDefinition``: the type of any grader definition, an open union over the declared kinds.

Its own module so that a model holding a full definition (a jury's juror) names it by import,
with no circle back through ``definition.py``, which imports those models. No list of kinds lives
here: a mapping validates into the model its ``kind``'s descriptor declares (``studio.core.kinds``,
``Kind.model``). The registry sits above the models, so it is reached by name, at validation time.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Annotated, Protocol, cast

from pydantic import PlainValidator, SerializeAsAny, ValidationInfo, WithJsonSchema
from pydantic_core import PydanticCustomError

from .common import GraderBase

#: the kind registry (``studio.core.kinds``), imported when a definition is first validated
KIND_REGISTRY = "studio.core.kinds"
#: where a definition file's JSON schema keeps the union (``files.json_schema`` fills it in)
UNION_REF = "#/$defs/GraderDefinition"
_PLACEHOLDER = "x-grader-definition"


class _Kind(Protocol):
    """What the models read of a kind's descriptor (``studio.core.kinds.GraderKind``)."""

    @property
    def model(self) -> type[GraderBase]: ...
    @property
    def is_judge(self) -> bool: ...
    @property
    def pairs(self) -> bool: ...


class _KindRegistry(Protocol):
    """What the models read of the kind registry module (``studio.core.kinds``)."""

    UnknownKind: type[Exception]

    def get_kind(self, kind: object) -> _Kind: ...  # a name that is no string: UnknownKind

    def kinds(self) -> Mapping[str, _Kind]: ...


def _registry() -> _KindRegistry:
    # a module reached by name is a ModuleType to mypy; studio.core.kinds defines these names
    # (tests/core/test_kinds.py uses them), and its GraderKind has these properties
    return cast(_KindRegistry, importlib.import_module(KIND_REGISTRY))


def model_for(kind: object) -> type[GraderBase]:
    """The definition class of ``kind``; an unknown name is refused with the nearest declared one."""
    registry = _registry()
    try:
        return registry.get_kind(kind).model
    except registry.UnknownKind as exc:
        raise PydanticCustomError("union_tag_invalid", str(exc)) from None


def _validate(value: object, info: ValidationInfo) -> GraderBase:
    """A definition of any kind: an instance passes as it is, a mapping validates into its kind's model
    (with the caller's context: a definition read from the library, ``common.STORED``, nested ones too)."""
    if isinstance(value, GraderBase) and "kind" in type(value).model_fields:  # the boundary: an instance passes as it is
        return value
    if not isinstance(value, dict):
        raise PydanticCustomError("model_type", "a grader definition must be a mapping of fields")
    if "kind" not in value:
        raise PydanticCustomError(
            "union_tag_not_found", "a grader definition needs a kind (one of {kinds})",
            {"kinds": ", ".join(_registry().kinds())})
    return model_for(value["kind"]).model_validate(value, context=info.context)


#: any grader definition; it serialises as its own kind's model (``SerializeAsAny``)
GraderDefinition = Annotated[
    SerializeAsAny[GraderBase],
    PlainValidator(_validate, json_schema_input_type=dict),
    WithJsonSchema({_PLACEHOLDER: True}),  # pydantic resolves every $ref itself: union_json_schema points it
]
