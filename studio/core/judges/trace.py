"""One sample's judge calls, recorded so the outcome keeps every prompt, answer and token count."""

from __future__ import annotations

import time

from studio.core.json_types import JsonArray, JsonObject
from studio.core.judges.answers import VERDICT_TOKENS, verdict_schema
from studio.core.judges.http.chat import ChatMessage, ChatRequest, ChatResponse
from studio.core.judges.http.client import JudgeClient
from studio.core.judges.http.redaction import redact_value
from studio.core.judges.parsing import parse_verdict
from studio.core.models import JudgeBase, Outcome
from studio.core.models.result import OutcomeStatus


class Trace:
    def __init__(self, client: JudgeClient) -> None:
        self.client = client
        self.calls: list[JsonObject] = []
        self.raw: JsonArray = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.started = time.perf_counter()

    async def ask(self, label: str, request: ChatRequest) -> ChatResponse:
        """Make one call; its record keeps the order calls were issued, not finished, in."""
        slot = len(self.calls)
        dumped = [m.model_dump() for m in request.messages]  # once: the finished record reuses it
        self.calls.append({"label": label, "messages": dumped, "pending": True})
        self.raw.append(None)
        response = await self.client.chat(request)
        self.record(label, request.messages, response, slot, dumped)
        return response

    async def ask_verdict(
        self, label: str, judge: JudgeBase, messages: list[ChatMessage], allowed: tuple[str, ...]
    ) -> tuple[str | None, str]:
        """One call at the judge's temperature and token limit, read as (verdict, reasoning)."""
        request = ChatRequest(
            messages=messages,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            answer_tokens=VERDICT_TOKENS,
            json_schema=verdict_schema(allowed),
        )
        response = await self.ask(label, request)
        return parse_verdict(response.text, allowed)

    def record(
        self,
        label: str,
        messages: list[ChatMessage],
        response: ChatResponse,
        slot: int | None = None,
        dumped: list[JsonObject] | None = None,
    ) -> None:
        entry = {
            "label": label,
            "messages": dumped if dumped is not None else [m.model_dump() for m in messages],
            "response": response.text,
            "cached": response.cached,
            "attempts": response.attempts,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "cached_tokens": response.cached_tokens,
            "latency_ms": round(response.latency_ms, 1),
            "queue_ms": round(response.queue_ms, 1),
        }
        if slot is None:
            self.calls.append(entry)
            self.raw.append(response.raw)
        else:
            self.calls[slot] = entry
            self.raw[slot] = response.raw
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        self.cached_tokens += response.cached_tokens

    def forget_pending(self, label: str) -> None:
        """Drop the last unfinished call named ``label``: a refusal the judge has worked around
        (it asks again differently) is not a failed call of this sample."""
        for i in range(len(self.calls) - 1, -1, -1):
            if self.calls[i].get("pending") and self.calls[i]["label"] == label:
                del self.calls[i], self.raw[i]
                return

    @property
    def cached(self) -> bool:
        done = [c for c in self.calls if "pending" not in c]
        return bool(done) and len(done) == len(self.calls) and all(c["cached"] for c in done)

    def outcome(
        self,
        *,
        score: float | None,
        rationale: str | None = None,
        details: JsonObject | None = None,
        status: OutcomeStatus = "ok",
        error: str | None = None,
    ) -> Outcome:
        info = {"endpoint": self.client.config.name, "model": self.client.model, **(details or {})}
        info["calls"] = [_finished(c) for c in self.calls]
        # what the judge wrote is stored and exported: a key it echoes (even inside its own JSON,
        # escaped) is removed here, where every judge's outcome is made
        return Outcome(
            status=status,
            score=score,
            rationale=redact_value(rationale),
            details=redact_value(info),
            error=redact_value(error),
            raw=redact_value(self.raw if len(self.raw) != 1 else self.raw[0]),
            duration_ms=(time.perf_counter() - self.started) * 1000,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached_tokens=self.cached_tokens,
            cached=self.cached,
        )

    def failure(self, error: str, details: JsonObject | None = None) -> Outcome:
        return self.outcome(score=None, status="error", error=error, details=details)

    def skipped(self, rationale: str, details: JsonObject | None = None) -> Outcome:
        return self.outcome(score=None, status="skipped", rationale=rationale, details=details)


def _finished(call: JsonObject) -> JsonObject:
    """A call still pending when the outcome is made has failed (its prompt is kept)."""
    if "pending" not in call:
        return call
    return {k: v for k, v in call.items() if k != "pending"} | {"failed": True}
