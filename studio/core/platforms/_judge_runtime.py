"""Grader Studio judge runtime: ships verbatim next to exported promptfoo and Inspect judges.

Standard library only (it runs in the platform's Python, not the studio's). It fills a judge's
messages from a dataset row, asks the judge's model, and reads the answer exactly as the studio
does: the verdict JSON (else the last PASS/FAIL/NA word), the rubric's clamped JSON score (Letta's
rules: empty submission -> 0 without a call, an error -> 0 with the error), the range judge's
second "SCORE:" call weighted by the score token's log-probabilities, else sampled five times.
The studio's tests run these functions against the studio's own parsers.
"""

from __future__ import annotations

import json
import math
import os
import re
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

#: decoded JSON (the judge's config, a model's answer): this file is embedded verbatim in exports, so it
#: names the boundary itself (studio/core/json_types.py is not there) and imports the standard library only
JsonObject = dict[str, Any]

FALLBACK_SAMPLES = 5
FALLBACK_TEMPERATURE = 1.0
SCORE_TOKENS = 8
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


# ---- messages ------------------------------------------------------------------------------------


def fill(messages: list[JsonObject], fields: JsonObject) -> list[dict[str, str]]:
    """The judge's messages for one row: fixed text, slots and sections (shown when non-empty)."""
    out = []
    for message in messages:
        text = []
        for part in message["parts"]:
            if isinstance(part, str):
                text.append(part)
            elif "slot" in part:
                text.append(str(fields[part["slot"]]))
            else:
                value = str(fields.get(part["section"]) or "")
                text.append(part["before"] + value + part["after"] if value else part.get("otherwise", ""))
        out.append({"role": message["role"], "content": "".join(text)})
    return out


# ---- reading answers (the studio's rules) --------------------------------------------------------


def _balanced(text: str, opener: str, closer: str) -> list[str]:
    found: list[str] = []
    for start in [i for i, ch in enumerate(text) if ch == opener][:20]:
        depth, in_str, escape = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == opener:
                depth += 1
            elif ch == closer:
                depth -= 1
                if depth == 0:
                    found.append(text[start : i + 1])
                    break
        if found:
            break
    return found


def parse_json_object(text: str) -> JsonObject | None:
    for candidate in [*_FENCE.findall(text), text]:
        for blob in [candidate.strip(), *_balanced(candidate, "{", "}")]:
            try:
                value = json.loads(blob)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def parse_verdict(text: str, allowed: tuple[str, ...]) -> tuple[str | None, str]:
    obj = parse_json_object(text)
    if obj is not None:
        raw = obj.get("verdict", obj.get("score", obj.get("result")))
        reasoning = str(obj.get("reasoning") or obj.get("rationale") or obj.get("explanation") or "")
        if isinstance(raw, str) and raw.strip().upper() in allowed:
            return raw.strip().upper(), reasoning
    pattern = re.compile(r"\b(" + "|".join(sorted(allowed, key=len, reverse=True)) + r")\b")
    hits = pattern.findall(text)
    if hits:
        return hits[-1], text.strip()
    return None, text.strip()


def parse_int_score(text: str, low: int, high: int) -> int | None:
    match = re.search(r"SCORE\s*[:=]\s*(-?\d+)", text, re.IGNORECASE)
    numbers = [match.group(1)] if match else re.findall(r"-?\d+", text)
    for raw in reversed(numbers):
        value = int(raw)
        if low <= value <= high:
            return value
    return None


def read_rubric_score(text: str) -> tuple[float, str]:
    """(score clamped to 0..1, rationale); ValueError when the answer has no numeric score."""
    obj = parse_json_object(text)
    if obj is None:
        raise ValueError("the judge's answer is not a JSON object with score and rationale")
    value = obj.get("score")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"the judge's JSON has no numeric score (got {obj.get('score')!r})")
    return min(1.0, max(0.0, float(value))), str(obj.get("rationale") or "")


def _as_int(token: str) -> int | None:
    text = token.strip()
    if text.lstrip("-").isdigit() and len(text) <= 4:
        return int(text)
    return None


def logprob_score(tokens: list[JsonObject] | None, low: int, high: int) -> dict[int, float] | None:
    """p of each integer in range at the score token (the first integer after SCORE:), or None."""
    tokens = tokens or []
    seen = ""
    position = None
    for i, token in enumerate(tokens):
        if _as_int(token["token"]) is not None:
            if position is None:
                position = i
            if re.search(r"SCORE\s*[:=]\s*$", seen, re.IGNORECASE):
                position = i
                break
        seen += token["token"]
    if position is None:
        return None
    token = tokens[position]
    candidates: dict[int, float] = {}
    for alt, logprob in (token.get("top") or {}).items():
        value = _as_int(alt)
        if value is not None and low <= value <= high:
            candidates[value] = max(logprob, candidates.get(value, float("-inf")))
    value = _as_int(token["token"])
    if value is not None and low <= value <= high:
        candidates.setdefault(value, token["logprob"])
    if not candidates:
        return None
    top = max(candidates.values())
    weights = {k: math.exp(v - top) for k, v in candidates.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


# ---- grading -------------------------------------------------------------------------------------

#: ask(messages, temperature, max_tokens, logprobs, seed, schema) -> {"text", "logprobs"}
Ask = Callable[..., Awaitable[JsonObject]]


async def grade(config: JsonObject, messages: list[dict[str, str]], completion: str, ask: Ask) -> JsonObject:
    """{"score", "reason", "details"} or {"skipped": reason} or {"error": reason, "score": 0.0}."""
    protocol = config["protocol"]
    temperature, max_tokens = config["temperature"], config["max_tokens"]
    if protocol == "verdict":
        answer = await ask(messages, temperature, max_tokens, False, None, config.get("answer_schema"))
        verdict, reasoning = parse_verdict(answer["text"], tuple(config["verdicts"]))
        if verdict is None:
            return {"error": "the judge's answer has no PASS, FAIL or NA verdict", "score": 0.0}
        if verdict == "NA":
            return {"skipped": reasoning or "NA", "details": {"verdict": verdict}}
        return {"score": 1.0 if verdict == "PASS" else 0.0, "reason": reasoning, "details": {"verdict": verdict}}
    if protocol == "rubric":
        if not completion:  # Letta: an empty submission scores 0 before any judge call
            return {"score": 0.0, "reason": "Empty submission - extractor found no content", "details": {}}
        try:
            answer = await ask(messages, temperature, max_tokens, False, None, config.get("answer_schema"))
            score, rationale = read_rubric_score(answer["text"])
        except ValueError as exc:
            return {"error": f"Error: {exc}", "score": 0.0}
        return {"score": score, "reason": rationale, "details": {}}
    low, high = config["score_range"]
    first = await ask(messages, temperature, max_tokens, False, None, None)
    reasoning = first["text"].strip()
    score_messages = [*messages, {"role": "assistant", "content": reasoning},
                      {"role": "user", "content": config["score_question"]}]
    answer = await ask(score_messages, temperature, SCORE_TOKENS, bool(config.get("logprobs")), None, None)
    probs = logprob_score(answer.get("logprobs"), low, high) if config.get("logprobs") else None
    details: JsonObject = {"range": [low, high]}
    if probs:
        raw = sum(s * p for s, p in probs.items())
        details.update(method="logprobs", probabilities={str(s): p for s, p in sorted(probs.items())})
    else:
        parsed = [s for s in [parse_int_score(answer["text"], low, high)] if s is not None]
        for seed in range(1, FALLBACK_SAMPLES):
            more = await ask(score_messages, FALLBACK_TEMPERATURE, SCORE_TOKENS, False, seed, None)
            value = parse_int_score(more["text"], low, high)
            if value is not None:
                parsed.append(value)
        if not parsed:
            return {"error": f"no integer from {low} to {high} in the judge's answer (and no logprobs)", "score": 0.0}
        raw = sum(parsed) / len(parsed)
        details.update(method="sampled", sampled_scores=parsed)
    details["raw_score"] = raw
    score = (raw - low) / (high - low) if config.get("normalize", True) else raw
    return {"score": round(score, 12), "reason": reasoning, "details": details}


# ---- asking an OpenAI-compatible or Anthropic endpoint (promptfoo's provider) ---------------------


def http_ask(config: JsonObject) -> Ask:
    """An ``Ask`` over the endpoint in ``config`` (base_url, model, kind, api_key_env); urllib only."""
    base = str(config.get("base_url") or "https://api.openai.com/v1").rstrip("/")
    key_env = config.get("api_key_env") or ("ANTHROPIC_API_KEY" if config.get("kind") == "anthropic"
                                            else "OPENAI_API_KEY")
    key = os.environ.get(key_env, "")
    anthropic = config.get("kind") == "anthropic"

    async def ask(messages: list[dict[str, str]], temperature: float, max_tokens: int, logprobs: bool,
                  seed: int | None, schema: JsonObject | None) -> JsonObject:
        body: JsonObject = {"model": config["model"], "temperature": temperature, "max_tokens": max_tokens}
        if anthropic:
            system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
            body["messages"] = [m for m in messages if m["role"] != "system"]
            if system:
                body["system"] = system
            url, headers = base + "/messages", {"x-api-key": key, "anthropic-version": "2023-06-01"}
        else:
            body["messages"] = messages
            if logprobs:
                body.update(logprobs=True, top_logprobs=20)
            if seed is not None:
                body["seed"] = seed
            url, headers = base + "/chat/completions", ({"Authorization": "Bearer " + key} if key else {})
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=float(config.get("request_timeout") or 120)) as reply:
                data = json.load(reply)
        except urllib.error.HTTPError as exc:
            if logprobs and 400 <= exc.code < 500:  # a server without logprobs: sample the score instead
                return await ask(messages, temperature, max_tokens, False, seed, schema)
            raise
        if anthropic:
            return {"text": "".join(p.get("text", "") for p in data.get("content", [])), "logprobs": None}
        choice = data["choices"][0]
        tokens = None
        block = choice.get("logprobs") or {}
        if isinstance(block.get("content"), list):
            tokens = []
            for item in block["content"]:
                if "token" not in item:
                    continue
                top: dict[str, float] = {}
                for alt in item.get("top_logprobs") or []:
                    if alt.get("logprob") is not None:
                        top[str(alt["token"])] = max(float(alt["logprob"]), top.get(str(alt["token"]), -math.inf))
                tokens.append({"token": str(item["token"]), "logprob": float(item.get("logprob") or 0.0), "top": top})
        return {"text": choice["message"].get("content") or "", "logprobs": tokens}

    return ask
