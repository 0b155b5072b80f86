"""What ``render_prompt`` returns: the exact messages of each call a judge makes for one sample."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from studio.core.judges.http.chat import ChatMessage


class RenderedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    messages: list[ChatMessage]
    note: str = Field(default="", description="why this call's text may differ at run time")


class RenderedPrompt(BaseModel):
    """Calls in the order the judge makes them; ``messages`` is the main judgement call."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    calls: list[RenderedCall]
    main: int = 0
    notes: list[str] = Field(default_factory=list)

    @property
    def messages(self) -> list[ChatMessage]:
        return self.calls[self.main].messages if self.calls else []

    def text(self) -> str:
        """Plain text for a terminal: each call, each message under a role header."""
        out: list[str] = []
        for n, call in enumerate(self.calls, 1):
            title = f"=== call {n}/{len(self.calls)}: {call.label} ==="
            out.append(title)
            if call.note:
                out.append(f"({call.note})")
            for message in call.messages:
                out.append(f"--- {message.role} ---")
                out.append(message.content)
            out.append("")
        out.extend(f"note: {note}" for note in self.notes)
        return "\n".join(out).rstrip() + "\n"
