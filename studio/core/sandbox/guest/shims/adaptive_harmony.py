"""Stdlib-only stand-in for ``adaptive_harmony``: graders written for Adaptive import StringThread."""

from __future__ import annotations

import json
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: every worker start would pay for it
    from collections.abc import Iterable, Sequence
    from typing import NamedTuple

    class StringTurn(NamedTuple):  # what the namedtuple below is, for the type checker
        role: str
        content: str
else:
    StringTurn = namedtuple("StringTurn", ["role", "content"])
    StringTurn.__doc__ = "One turn of a thread: (role, content)."

__all__ = ["StringThread", "StringTurn"]


class StringThread:
    """A conversation of (role, content) turns plus free-form metadata (not serialised)."""

    __slots__ = ("_turns", "metadata")

    def __init__(self, turns: Sequence[tuple[str, str]] | None = None, metadata: object = None) -> None:
        self._turns: list[StringTurn] = [StringTurn(str(r), str(c)) for r, c in (turns or ())]
        self.metadata = metadata

    @classmethod
    def _trusted(cls, turns: Iterable[Sequence[str]], metadata: object) -> StringThread:
        """Fast constructor for the worker: the turns are already strings."""
        thread = cls.__new__(cls)
        thread._turns = [StringTurn(t[0], t[1]) for t in turns]
        thread.metadata = metadata
        return thread

    def get_turns(self) -> list[StringTurn]:
        return list(self._turns)

    def messages(self) -> list[tuple[str, str]]:
        turns = self._turns
        if turns and turns[-1].role == "assistant":
            turns = turns[:-1]
        return [(t.role, t.content) for t in turns]

    def completion(self) -> str | None:
        if self._turns and self._turns[-1].role == "assistant":
            return self._turns[-1].content
        return None

    def last_content(self) -> str:
        if not self._turns:
            raise IndexError("last_content() on an empty thread")
        return self._turns[-1].content

    def _with(self, role: str, content: str) -> StringThread:
        return StringThread._trusted([*self._turns, (role, content)], self.metadata)

    def user(self, content: str) -> StringThread:
        return self._with("user", content)

    def system(self, content: str) -> StringThread:
        return self._with("system", content)

    def assistant(self, content: str) -> StringThread:
        return self._with("assistant", content)

    def to_json(self) -> str:
        return json.dumps({"turns": [[t.role, t.content] for t in self._turns]})

    @classmethod
    def from_json(cls, text: str) -> StringThread:
        data = json.loads(text)
        turns = data["turns"] if isinstance(data, dict) else data
        parsed = [(t["role"], t["content"]) if isinstance(t, dict) else (t[0], t[1]) for t in turns]
        return cls(parsed)

    def __len__(self) -> int:
        return len(self._turns)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StringThread) and self._turns == other._turns

    def __repr__(self) -> str:
        return f"StringThread(turns={[tuple(t) for t in self._turns]!r}, metadata={self.metadata!r})"
