"""A range judge exported to promptfoo: an ``llm-rubric`` whose grading provider keeps the scale.

promptfoo's ``g-eval`` always asks for 0..10 and divides by 10, and ``llm-rubric`` takes the grading
model's ``score`` as it is: neither reads a score on the judge's own range. So the export writes an
``llm-rubric`` with its own rubric prompt (the range, the steps and the subrange expectations) and a
small standard-library Python provider (promptfoo's ``file://...py`` providers) that asks the judge's
model, reads the integer after ``SCORE:`` (else the last integer in range, as the studio's range judge
reads a sampled score) and hands promptfoo ``{"score": ..., "pass": ..., "reason": ...}`` with the
score normalised as the studio does ((s - min) / (max - min), or s when ``normalize`` is off).
The assertion's ``threshold`` is the middle of the scale: promptfoo passes a sample that reaches it.
"""

from __future__ import annotations

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import RangeJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD

OPENAI_BASE = "https://api.openai.com/v1"

# Nunjucks, rendered by promptfoo: {{ rubric }} is the assertion's value (the criteria), {{ output }}
# the graded output; the scale and the guidance are written in at export time.
RUBRIC_PROMPT = """You grade one output written by an AI assistant against a criterion, on a scale of integers.

Criterion:
{{{{ rubric }}}}
{guidance}
Output to grade:
<output>
{{{{ output }}}}
</output>

Reason briefly, then end your answer with one line "SCORE: <integer from {low} to {high}>"."""

PROVIDER = '''"""promptfoo grading provider exported by Grader Studio for the range judge {key!r}.

It asks the judge's model (an OpenAI-compatible or Anthropic chat endpoint) with the rubric prompt
promptfoo rendered, reads the integer after SCORE: (else the last integer from MIN to MAX) and
answers llm-rubric with the score normalised to 0..1 as Grader Studio does. Standard library only.
"""

import json
import os
import re
import urllib.request


def read_score(text, low, high):
    """The integer after SCORE: (else the last integer in the text) when it is in range, or None."""
    found = re.search(r"SCORE\\s*[:=]\\s*(-?\\d+)", text, re.IGNORECASE)
    numbers = [found.group(1)] if found else re.findall(r"-?\\d+", text)
    for raw in reversed(numbers):
        if low <= int(raw) <= high:
            return int(raw)
    return None


def ask(config, prompt):
    base = config["base_url"].rstrip("/")
    key_env = config.get("api_key_env")
    key = os.environ.get(key_env, "") if key_env else ""
    message = [{{"role": "user", "content": prompt}}]
    if config.get("kind") == "anthropic":
        url, headers = base + "/messages", {{"x-api-key": key, "anthropic-version": "2023-06-01"}}
        body = {{"model": config["model"], "max_tokens": config.get("max_tokens") or 1024, "messages": message}}
    else:
        url, headers = base + "/chat/completions", {{"Authorization": "Bearer " + key}} if key else {{}}
        body = {{"model": config["model"], "messages": message}}
        if config.get("max_tokens"):
            body["max_tokens"] = config["max_tokens"]
    body["temperature"] = config.get("temperature", 0.0)
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={{"Content-Type": "application/json", **headers}})
    with urllib.request.urlopen(request, timeout=float(config.get("timeout", 120))) as reply:
        data = json.load(reply)
    if config.get("kind") == "anthropic":
        return "".join(part.get("text", "") for part in data.get("content", []))
    return data["choices"][0]["message"]["content"] or ""


def call_api(prompt, options, context):
    config = (options or {{}}).get("config") or {{}}
    low, high = config["score_range"]
    try:
        text = ask(config, prompt)
    except Exception as exc:  # promptfoo reports a provider error as the assertion's failure
        return {{"error": "the judge's model could not be asked: %s" % exc}}
    raw = read_score(text, low, high)
    if raw is None:
        return {{"error": "no integer from %d to %d in the judge's answer: %r" % (low, high, text[:200])}}
    score = (raw - low) / (high - low) if config.get("normalize", True) else raw
    verdict = {{"score": round(score, 12), "pass": True, "reason": text.strip() or "SCORE: %d" % raw}}
    return {{"output": json.dumps(verdict)}}
'''


def is_range_provider(provider: JsonValue) -> bool:
    """Whether an assertion's provider is one this module wrote (a range judge's llm-rubric)."""
    return (isinstance(provider, dict) and str(provider.get("id", "")).startswith("file://")
            and str(provider.get("id", "")).endswith("_range_provider.py")
            and isinstance(provider.get("config"), dict) and "score_range" in provider["config"])


def judge_from(key: str, criteria: str, provider: JsonObject) -> RangeJudge:
    """The range judge an exported llm-rubric assertion was written from (the endpoint becomes the
    model name: endpoints are the library's, not the config's)."""
    config = provider["config"]
    fields = {name: config[name] for name in ("score_range", "normalize", "temperature", "max_tokens",
                                              "evaluation_steps", "subrange_expectations") if name in config}
    return RangeJudge(key=key, criteria=criteria, model=config.get("model") or None, **fields)


def guidance(judge: RangeJudge) -> str:
    """The judge's steps and subrange expectations, as text for the rubric prompt."""
    parts = []
    if judge.evaluation_steps:
        parts.append("Evaluation steps:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(judge.evaluation_steps, 1)))
    if judge.subrange_expectations:
        parts.append("What each score means:\n" + "\n".join(
            f"- {s.min}" + (f" to {s.max}" if s.max != s.min else "") + f": {s.expectation}"
            for s in judge.subrange_expectations))
    # promptfoo renders the rubric prompt with Nunjucks: the judge's own text is kept raw
    return "".join(f"\n{{% raw %}}{p}{{% endraw %}}\n" for p in parts)


def range_assertion(judge: RangeJudge, endpoint: EndpointConfig | None) -> tuple[JsonObject, dict[str, str]]:
    """The llm-rubric assertion and its provider file for ``judge`` (``endpoint``: its EndpointConfig
    when the export knows it, else the judge's model on OpenAI)."""
    low, high = judge.score_range
    config: JsonObject = {
        "base_url": endpoint.base_url if endpoint is not None else OPENAI_BASE,
        "model": judge.model or (endpoint.model if endpoint is not None else ""),
        "kind": endpoint.kind if endpoint is not None else "openai",
        "api_key_env": (endpoint.api_key_env if endpoint is not None else "OPENAI_API_KEY"),
        "score_range": [low, high],
        "normalize": judge.normalize,
        "temperature": judge.temperature,
    }
    if judge.max_tokens:
        config["max_tokens"] = judge.max_tokens
    # not read by the provider: they let an import of this config rebuild the judge
    if judge.evaluation_steps is not None:
        config["evaluation_steps"] = list(judge.evaluation_steps)
    if judge.subrange_expectations:
        config["subrange_expectations"] = [s.model_dump() for s in judge.subrange_expectations]
    name = f"{judge.key}_range_provider.py"
    prompt = RUBRIC_PROMPT.format(guidance=guidance(judge), low=low, high=high)
    assertion = {
        "type": "llm-rubric",
        "value": judge.criteria,
        "rubricPrompt": prompt,
        "provider": {"id": f"file://{name}", "config": config},
        "threshold": DEFAULT_PASS_THRESHOLD if judge.normalize else (low + high) / 2,
    }
    return assertion, {name: PROVIDER.format(key=judge.key)}
