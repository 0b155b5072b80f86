"""Fields every grader kind shares: identity, the metric it writes, what it reads from a sample."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonObject

#: marks a field that belongs to this machine (a folder, an environment variable's name): exports never
#: write it, not even in the definition a generated module carries (``platforms._carried``)
LOCAL: JsonObject = {"local": True}

SLUG_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,127}$"

#: the validation context of a definition read back from the library (``parse_grader(..., stored=True)``):
#: a rule added after a release stored a definition is reported by ``problems()`` there, not raised,
#: so an older library still opens and shows the grader as invalid instead of failing to load
STORED: JsonObject = {"stored": True}


def is_stored(context: object) -> bool:

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
    config: JsonObject = Field(default_factory=dict)


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
    #: the list field holding the graders this one combines (a composite's ``components``, a jury's
    #: ``jurors``; each item keeps its definition in ``.grader``); None: it combines none. ``parts``
    #: and ``walk`` read it, so the tree of a grader is walked in one place.
    PARTS_FIELD: ClassVar[str | None] = None

    key: str = Field(pattern=SLUG_PATTERN, description="Unique slug among live graders")
    name: str = ""
    description: str = ""
    metric: Metric = Field(default_factory=Metric)
    extractor: Extractor | None = None
    tags: list[str] = Field(default_factory=list)

    @property
    def display_name(self) -> str:
        return self.name or self.key

    def parts(self) -> tuple[GraderBase, ...]:
        """The graders this one combines, in order (empty for a grader that combines none)."""
        if self.PARTS_FIELD is None:
            return ()
        return tuple(item.grader for item in getattr(self, self.PARTS_FIELD))

    def part_labels(self) -> list[str]:
        """What each part is called (a component's, a juror's label), in the order of ``parts``."""
        if self.PARTS_FIELD is None:
            return []
        return [item.label for item in getattr(self, self.PARTS_FIELD)]

    def parts_needed(self) -> int | None:
        """How many of its parts must answer for a sample to be graded (a jury's), or None when the
        grader needs every part it has: its run is then refused when one endpoint is down."""
        return None

    def score_bounds(self) -> tuple[float, float] | None:
        """The scores this grader can give (None: any finite number): its kind's ``SCORE_BOUNDS``;
        a grader that combines others decides from its parts'."""
        return self.SCORE_BOUNDS

    def judged_field(self) -> str:
        """The sample field holding the answer under judgement (a pairwise judge's answer A may be
        another column); bias probes pad this one."""
        return "completion"

    def own_endpoints(self) -> tuple[str | None, ...]:
        """The endpoints this grader itself calls (None: the run's, or the library's only one); its
        parts' are theirs (``walk``). A prompt judge calls its own, a function with model access
        its ``endpoint``; the others call none."""
        return ()

    def stays_here(self) -> str | None:
        """Why this grader runs on this machine although its kind may run on a cluster's nodes
        (engine/executors/placement.py), or None."""
        return None

    def problems(self) -> list[str]:
        """Rules the definition breaks, each a sentence naming its field: a new definition that
        breaks one is refused by its validator; one read from the library (``STORED``) keeps it, is
        shown invalid (the Checks, the designer) and is neither exported nor sent to a judge."""
        return []


def walk(grader: GraderBase) -> Iterator[GraderBase]:
    """The grader and every grader inside it, depth first, each before its parts: the one walk over
    a composite's components and a jury's jurors (``GraderBase.PARTS_FIELD``)."""
    yield grader
    for part in grader.parts():
        yield from walk(part)
