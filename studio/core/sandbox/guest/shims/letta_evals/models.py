"""The two objects a Letta custom grader touches: the dataset Sample and its GradeResult."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the worker has no studio package: these are names for the type checker
    from studio.core.json_types import JsonObject, JsonValue


class Sample:
    """A dataset row: ``input``, ``ground_truth``, ``metadata``, ``rubric_vars`` and the rest."""

    def __init__(
        self,
        id: JsonValue = None,
        input: JsonValue = "",
        ground_truth: str | None = None,
        metadata: JsonObject | None = None,
        rubric_vars: JsonObject | None = None,
        agent_args: JsonObject | None = None,
        extra_vars: JsonObject | None = None,
        **extra: JsonValue,
    ) -> None:
        self.id = id
        self.input = input
        self.ground_truth = ground_truth
        self.metadata = metadata or {}
        self.rubric_vars = rubric_vars or {}
        self.agent_args = agent_args or {}
        self.extra_vars = extra_vars or {}
        for key, value in extra.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        return f"Sample(id={self.id!r}, input={self.input!r}, ground_truth={self.ground_truth!r})"


class GradeResult:
    """A score in [0, 1] with its rationale and optional metadata."""

    def __init__(
        self, score: float, rationale: str | None = None, metadata: JsonObject | None = None
    ) -> None:
        self.score = score
        self.rationale = rationale
        self.metadata = metadata or {}

    def to_payload(self) -> JsonObject:
        return {
            "__grade_result__": True,
            "score": self.score,
            "rationale": self.rationale,
            "metadata": self.metadata,
        }

    def __repr__(self) -> str:
        return f"GradeResult(score={self.score!r}, rationale={self.rationale!r})"
