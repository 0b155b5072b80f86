"""Our own OpenAI-compatible judge server and Adaptive reward server, for tests, demos and dry runs.

A scripted judge, not a model (see ``fake_script``). ``FakeJudgeServer`` serves
``/v1/chat/completions`` (with logprobs/top_logprobs), ``/v1/messages`` (Anthropic shape),
``/v1/models`` and ``/v1/embeddings``; ``FakeRewardServer`` serves ``/score``, ``/batch_score`` and
``/info``. Both inject faults (``fake_http``); ``start()`` binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from collections import Counter

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.judges.tokens import counter_for

from . import fake_model
from .fake_http import FakeServerBase, Reply
from .fake_local import LocalServerHabits
from .fake_script import LABEL, Answer, Rule, ScriptedJudge, contains_reference, markers

MODEL_ID = "fake-judge"


class FakeJudgeServer(FakeServerBase):
    """OpenAI-compatible chat completions from a scripted judge (and the Anthropic messages shape)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0.0,
        logprobs: bool = True,
        rules: list[Rule] | None = None,
        habits: LocalServerHabits | None = None,
        bias: str | None = None,
        model_under_test: bool = False,
    ) -> None:
        super().__init__(host, port, latency_ms)
        #: answer every chat request as the scripted model under test (``fake_model``), not only
        #: those naming one of its models
        self.model_under_test = model_under_test
        #: chat answers given as the model under test, by request body: a test of ``generate
        #: --resume`` counts them to show no answered call was made twice
        self.generated: Counter[str] = Counter()
        self.logprobs = logprobs
        self.judge = ScriptedJudge(rules, bias=bias)
        self._ids = 0
        # how a local model server (llama-cpp-python) behaves where it differs from OpenAI
        self.habits = habits or LocalServerHabits()
        self._slots: asyncio.Semaphore | None = None
        #: system prompts already seen: a repeat is served "from the prompt cache", as OpenAI's is
        self._prefixes: set[str] = set()
        #: the usage every chat reply has reported: what a run's stored usage must add up to
        self.usage_sent = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}

    async def dispatch(
        self, method: str, target: str, headers: dict[str, str], raw: bytes | None
    ) -> Reply:
        habits = self.habits
        if habits.slots is None:
            return await self._as_local_server(method, target, headers, raw)
        if self._slots is None:  # made on the server's own loop, at its first request
            self._slots = asyncio.Semaphore(habits.slots)
        async with self._slots:  # single-slot servers answer one request at a time
            return await self._as_local_server(method, target, headers, raw)

    async def _as_local_server(
        self, method: str, target: str, headers: dict[str, str], raw: bytes | None
    ) -> Reply:
        path = target.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/props" and self.habits.slots is not None:
            return Reply(200, json.dumps({"total_slots": self.habits.slots}).encode())
        if method == "POST" and raw and path.endswith("/chat/completions"):
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            if isinstance(body, dict):
                refusal = self.habits.refusal(body)
                if refusal is not None:
                    with self._lock:
                        self.requests[path] += 1
                    return refusal
                if body.get("max_tokens") is None and self.habits.unbounded_seconds:
                    # generating to the end of the context: the answer comes, but much later
                    await asyncio.sleep(self.habits.unbounded_seconds)
        return await super().dispatch(method, target, headers, raw)

    @property
    def base_url(self) -> str:
        """What ``endpoints add --base-url`` takes for this server."""
        return f"{self.url}/v1"

    def add_rule(self, pattern: str, reply: str, probs: list[float] | None = None) -> None:
        self.judge.rules.append(Rule(pattern=pattern, reply=reply, probs=probs))

    def route(self, method: str, path: str, body: JsonValue) -> JsonValue:
        if method == "GET" and path in ("/v1/models", "/models"):
            return {
                "object": "list",
                "data": [{"id": MODEL_ID, "object": "model", "owned_by": LABEL}]
                + [{"id": m, "object": "model", "owned_by": fake_model.LABEL} for m in fake_model.MODELS],
            }
        if method == "GET" and path in ("", "/health"):
            return {"status": "ok", "server": LABEL}
        if method != "POST":
            return None
        if path in ("/v1/chat/completions", "/chat/completions"):
            return self._chat(body)
        if path in ("/v1/messages", "/messages"):
            return self._anthropic(body)
        if path in ("/v1/embeddings", "/embeddings"):
            return self._embeddings(body)
        return None

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _chat(self, body: JsonObject) -> JsonObject:
        messages = body.get("messages") or []
        if self.model_under_test or fake_model.serves(body.get("model")):
            text = fake_model.answer(messages, body.get("model"), body.get("seed"))
            with self._lock:
                self.generated[json.dumps(body, sort_keys=True)] += 1
            answer = Answer(text, [])
        else:
            answer = self.judge.answer(messages)
        answer.text = self.habits.shape(answer.text, body)
        if not answer.tokens:
            answer.tokens = [(t, 0.0, {t: 0.0}) for t in answer.text.split()[:64]] or [
                ("", 0.0, {})
            ]
        logprobs = None
        if body.get("logprobs") and self.logprobs:
            k = int(body.get("top_logprobs") or 0)
            logprobs = {
                "content": [
                    {
                        "token": token,
                        "logprob": logprob,
                        "bytes": list(token.encode("utf-8")),
                        "top_logprobs": [
                            {"token": t, "logprob": lp}
                            for t, lp in sorted(top.items(), key=lambda kv: -kv[1])[: k or len(top)]
                        ],
                    }
                    for token, logprob, top in answer.tokens
                ]
            }
        prompt_tokens, cached_tokens = self._prompt_usage(body.get("model"), messages)
        completion_tokens = max(1, len(answer.text.split()))
        self._count_usage(prompt_tokens, completion_tokens, cached_tokens)
        return self._usage_habit({
            "id": f"chatcmpl-fake-{self._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "system_fingerprint": "grader-studio-scripted-judge",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.text},
                    "logprobs": logprobs,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        })

    def _usage_habit(self, reply: JsonObject) -> JsonObject:
        """The answer as sent: without its ``usage`` block for a server that reports none."""
        if not self.habits.usage:
            reply.pop("usage", None)
        return reply

    def _count_usage(self, prompt: int, completion: int, cached: int) -> None:
        with self._lock:
            self.usage_sent["calls"] += 1
            self.usage_sent["prompt_tokens"] += prompt
            self.usage_sent["completion_tokens"] += completion
            self.usage_sent["cached_tokens"] += cached

    def _prompt_usage(self, model: JsonValue, messages: JsonArray) -> tuple[int, int]:
        """(prompt tokens, of which cached): counted with the model's own tokenizer when it is an
        OpenAI model (as OpenAI would bill it), else one token a word; the first message counts as
        cached when the same one came before (OpenAI caches a repeated prompt prefix)."""
        counter = counter_for(str(model or ""))
        if counter.exact:
            prompt_tokens = counter.count_messages(messages)
            first = counter.count_messages(messages[:1]) if messages else 0
        else:
            prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in messages)
            first = len(str(messages[0].get("content") or "").split()) if messages else 0
        head = json.dumps(messages[:1], sort_keys=True)
        with self._lock:
            seen = head in self._prefixes
            self._prefixes.add(head)
        return prompt_tokens, (min(first, prompt_tokens) if seen and len(messages) > 1 else 0)

    def _anthropic(self, body: JsonObject) -> JsonObject:
        messages = list(body.get("messages") or [])
        if body.get("system"):
            messages.insert(0, {"role": "system", "content": body["system"]})
        if self.model_under_test or fake_model.serves(body.get("model")):
            with self._lock:
                self.generated[json.dumps(body, sort_keys=True)] += 1
            answer = Answer(fake_model.answer(messages, body.get("model")), [])
        else:
            answer = self.judge.answer(messages)
        prompt_tokens, cached_tokens = self._prompt_usage(None, messages)
        completion_tokens = max(1, len(answer.text.split()))
        self._count_usage(prompt_tokens, completion_tokens, cached_tokens)
        return self._usage_habit({
            "id": f"msg_fake_{self._next_id()}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL_ID,
            "content": [{"type": "text", "text": answer.text}],
            "stop_reason": "end_turn",
            "usage": {
                # Anthropic's input_tokens leaves the cache read out
                "input_tokens": prompt_tokens - cached_tokens,
                "cache_read_input_tokens": cached_tokens,
                "output_tokens": completion_tokens,
            },
        })

    def _embeddings(self, body: JsonObject) -> JsonObject:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else [str(x) for x in inputs or []]
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": embed(t)}
                for i, t in enumerate(texts)
            ],
            "model": body.get("model") or MODEL_ID,
            "usage": {
                "prompt_tokens": sum(len(t.split()) for t in texts),
                "total_tokens": sum(len(t.split()) for t in texts),
            },
        }


def embed(text: str, dims: int = 64) -> list[float]:
    """Hashed bag of words, unit length: similar texts get similar vectors, deterministically."""
    vector = [0.0] * dims
    for word in text.lower().split():
        digest = hashlib.md5(word.encode("utf-8")).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class FakeRewardServer(FakeServerBase):
    """Adaptive reward server: reward 1.0 when the completion contains metadata.expected, else 0.0.

    ``[[reward=0.25]]`` in a turn sets the reward; a non-numeric value (``[[reward=oops]]``) is sent
    back as is, to exercise invalid-reward handling.
    """

    def route(self, method: str, path: str, body: JsonValue) -> JsonValue:
        if method == "GET" and path == "/info":
            return {"name": "fake-reward-server", "description": LABEL, "version": "1"}
        if method == "POST" and path == "/score":
            return self.score(body)
        if method == "POST" and path == "/batch_score":
            requests = body.get("requests") if isinstance(body, dict) else body
            return {"responses": [self.score(r) for r in requests or []]}
        return None

    def score(self, request: JsonObject) -> JsonObject:
        turns = request.get("turns") or []
        text = "\n".join(str(t.get("content") or "") for t in turns)
        completion = (
            str(turns[-1].get("content") or "")
            if turns and turns[-1].get("role") == "assistant"
            else ""
        )
        expected = str((request.get("metadata") or {}).get("expected") or "")
        scripted = markers(text.replace("[[reward=", "[[judge:reward="))
        reward: JsonValue
        if "reward" in scripted:
            try:
                reward = float(scripted["reward"])
            except ValueError:
                reward = scripted["reward"]
        else:
            reward = 1.0 if contains_reference(completion, expected) else 0.0
        return {
            "reward": reward,
            "metadata": {"reason": f"scripted reward {reward}"},
            "id": request.get("id"),
        }
