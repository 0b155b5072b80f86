"""Conversations and samples: what every grader kind reads.

Roles are free strings (``system``, ``user``, ``assistant``, ``document``, ``tool`` ...) because the
platforms use more than the chat roles; a document turn carries one retrieved chunk for RAG judges.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from studio.core.json_types import JsonObject


class ToolCall(BaseModel):
    """One tool invocation made by an assistant turn (OpenAI shape, arguments kept as JSON text)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str | None = None
    name: str
    arguments: str = "{}"


class Turn(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    role: str
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    name: str | None = None
    tool_call_id: str | None = None


class Thread(BaseModel):
    """A whole conversation, the completion being graded included as its last assistant turn."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    turns: list[Turn] = Field(default_factory=list)
    metadata: JsonObject = Field(default_factory=dict)

    def completion(self) -> str | None:
        """Content of the last turn when it is an assistant turn (Adaptive's rule)."""
        if self.turns and self.turns[-1].role == "assistant":
            return self.turns[-1].content
        return None

    def context_turns(self) -> list[Turn]:
        """Every turn except a final assistant turn."""
        return self.turns[:-1] if self.completion() is not None else list(self.turns)

    def last_user_content(self) -> str:
        for turn in reversed(self.turns):
            if turn.role == "user":
                return turn.content
        return ""

    def documents(self) -> list[str]:
        return [t.content for t in self.turns if t.role == "document"]


class Sample(BaseModel):
    """One dataset row, normalised from any platform's row shape.

    ``messages`` are the input turns, ``completion`` the output under test, ``expected`` the ground
    truth (MKA1 ``target``, Letta ``ground_truth``). ``fields`` keeps the original row so that graders
    written against a platform's own row shape (MKA1 ``item``, OpenAI ``item``, Letta ``rubric_vars``)
    see exactly what they would see there.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str
    messages: list[Turn] = Field(default_factory=list)
    completion: str | None = None
    expected: str | None = None
    metadata: JsonObject = Field(default_factory=dict)
    fields: JsonObject = Field(default_factory=dict)

    def thread(self) -> Thread:
        """The conversation with the completion appended; ``expected`` is visible in the metadata."""
        turns = list(self.messages)
        if self.completion is not None:
            turns.append(Turn(role="assistant", content=self.completion))
        metadata = dict(self.metadata)
        if self.expected is not None:
            metadata.setdefault("expected", self.expected)
        return Thread(turns=turns, metadata=metadata)

    def input_text(self) -> str:
        """The last user message: what a person reads as 'the question'."""
        for turn in reversed(self.messages):
            if turn.role == "user":
                return turn.content
        return self.messages[-1].content if self.messages else ""


class SampleRow(NamedTuple):
    """A sample in the form the library stores it: an import's hot path builds this straight from a
    plain row (``datasets.shapes.plain_row``) instead of a ``Sample`` to be dumped again. ``data``
    is the sample's JSON as ``Sample.model_dump_json(exclude_defaults=True)`` gives it."""

    id: str
    input_text: str
    completion: str | None
    expected: str | None
    data: str

    @classmethod
    def of(cls, sample: Sample) -> SampleRow:
        return cls(sample.id, sample.input_text(), sample.completion, sample.expected,
                   sample.model_dump_json(exclude_defaults=True))

