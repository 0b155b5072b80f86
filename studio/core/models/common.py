"""Fields every grader kind shares: identity, the metric it writes, what it reads from a sample."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

#: marks a field that belongs to this machine (a folder, an environment variable's name): exports never
#: write it, not even in the definition a generated module carries (``platforms._carried``)
LOCAL: dict[str, Any] = {"local": True}

SLUG_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,127}$"

#: the validation context of a definition read back from the library (``parse_grader(..., stored=True)``):
#: a rule added after a release stored a definition is reported by ``problems()`` there, not raised,
#: so an older library still opens and shows the grader as invalid instead of failing to load
STORED: dict[str, Any] = {"stored": True}


def is_stored(context: Any) -> bool:
    """Whether a validator runs on a definition read back from the library (see ``STORED``)."""
    return isinstance(context, dict) and bool(context.get("stored"))

ExtractorKind = Literal[
    "last_assistant",
    "first_assistant",
    "all_assistant",
    "last_turn",
    "pattern",
    "tool_arguments",
    "tool_output",
    "after_marker",
    "memory_block",
]


class Metric(BaseModel):
    """The metric a grader writes: Adaptive ``metric {key, kind}``, MKA1 ``metric_id``."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    key: str = "score"
    kind: Literal["scalar", "bool"] = "scalar"


class Extractor(BaseModel):
    """Letta's extractors: which part of the trajectory a grader scores (default: last assistant)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    kind: ExtractorKind = "last_assistant"
    config: dict[str, Any] = Field(default_factory=dict)


class GraderBase(BaseModel):
    # defer_build (every model config of this package): a model's validator is built when it is first
    # used, not when its module is imported; a run validates its own kind and the models it reads,
    # not every kind's (part of a judge run's start-up, bench/startup.py)
    model_config = ConfigDict(defer_build=True, extra="forbid")

    if TYPE_CHECKING:  # each kind's model declares ``kind: Literal[...]``; the base has none to validate
        kind: str

    #: the scores a grader of this kind gives: judges and built-in checks normalise to [0, 1]; None:
    #: any finite number (a function, bash or reward-server grader returns what it likes). A suite's
    #: thresholds are checked against it (store/suites.py); the kind descriptor reads it from here.
    SCORE_BOUNDS: ClassVar[tuple[float, float] | None] = (0.0, 1.0)

    key: str = Field(pattern=SLUG_PATTERN, description="Unique slug among live graders")
    name: str = ""
    description: str = ""
    metric: Metric = Field(default_factory=Metric)
    extractor: Extractor | None = None
    tags: list[str] = Field(default_factory=list)

    @property
    def display_name(self) -> str:
        return self.name or self.key

    def score_bounds(self) -> tuple[float, float] | None:
        """The scores this definition can give: its kind's ``SCORE_BOUNDS``, unless the definition
        itself says more (an OpenAI score_model's ``range``)."""
        return self.SCORE_BOUNDS

    def problems(self) -> list[str]:
        """Rules the definition breaks, each a sentence naming its field: a new definition that
        breaks one is refused by its validator; one read from the library (``STORED``) keeps it, is
        shown invalid (the Checks, the designer) and is neither exported nor sent to a judge."""
        return []
