"""A judge exported to promptfoo as the same judge: ``llm-rubric`` with the studio's messages.

promptfoo renders an ``llm-rubric``'s ``rubricPrompt`` (a list of chat messages) with Nunjucks over
the test's vars and hands the result to the assertion's grading provider. The export writes the
studio's messages as that rubric prompt (fixed text kept raw, per-sample slots as vars) and a
standard-library provider (``studio_judge_provider.py`` with ``studio_judge_runtime.py``) that
sends them unchanged to the judge's model with its temperature and token limit and reads the answer
as the studio does, so promptfoo's score is the studio's. What promptfoo cannot say is a warning:
an NA verdict (the studio leaves the sample out) becomes a provider error naming NA.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import GraderDefinition, dump_grader, parse_grader
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD, at_least_source

from ._base import PlatformError
from ._judge_prompts import Message, PortableJudge, Section, Slot

RUNTIME_FILE = "studio_judge_runtime.py"
PROVIDER_FILE = "studio_judge_provider.py"
PROVIDER_ID = f"file://{PROVIDER_FILE}"

PROVIDER = '''"""promptfoo grading provider exported by Grader Studio: a judge that sends the studio's messages.

promptfoo renders the rubric prompt (the judge's chat messages) and calls call_api with it; this
asks the judge's model (an OpenAI-compatible or Anthropic endpoint, its key in the environment
variable the config names) and reads the answer as Grader Studio does (studio_judge_runtime.py).
"""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from studio_judge_runtime import grade, http_ask  # noqa: E402


def call_api(prompt, options, context):
    config = (options or {}).get("config") or {}
    variables = (context or {}).get("vars") or {}
    completion = variables.get("completion", variables.get("output", ""))
    try:
        result = asyncio.run(grade(config, json.loads(prompt), str(completion or ""), http_ask(config)))
    except Exception as exc:  # promptfoo reports a provider error as the assertion's failure
        return {"error": "the judge's model could not be asked: %s" % exc}
    if "skipped" in result:
        return {"error": "NA: the criterion does not apply (Grader Studio leaves this sample out): %s"
                % result["skipped"]}
    if "error" in result:
        return {"output": json.dumps({"pass": False, "score": 0.0, "reason": result["error"]})}
    passed = PASSES
    return {"output": json.dumps({"pass": passed, "score": result["score"], "reason": result["reason"]})}
'''.replace(
    # the pass rule's clause, at the threshold the export writes into the assertion's config (always)
    "PASSES", at_least_source('result["score"]', 'config["pass_threshold"]'))

# which var holds the graded text: ``output`` (promptfoo's own) for a grader alone, the row's
# ``completion`` when the export writes the dataset (promptfoo parses a JSON-looking output, and
# would re-serialise it in the prompt)
_COMPLETION_VAR: ContextVar[str] = ContextVar("promptfoo_completion_var", default="output")


@contextmanager
def completion_var(name: str) -> Iterator[None]:
    token = _COMPLETION_VAR.set(name)
    try:
        yield
    finally:
        _COMPLETION_VAR.reset(token)


def _raw(text: str) -> str:
    """Literal text for Nunjucks: kept raw when it holds template syntax."""
    if not any(mark in text for mark in ("{{", "{%", "{#")):
        return text
    if "endraw" in text:
        raise PlatformError("the judge's text contains 'endraw', which Nunjucks cannot keep literal")
    return "{% raw %}" + text + "{% endraw %}"


def _var(name: str) -> str:
    return _COMPLETION_VAR.get() if name == "completion" else name


def nunjucks(message: Message) -> dict[str, str]:
    out = []
    for seg in message.segments:
        if isinstance(seg, str):
            out.append(_raw(seg))
        elif isinstance(seg, Slot):
            out.append("{{ " + _var(seg.name) + " }}")
        elif isinstance(seg, Section):
            name = _var(seg.name)
            out.append("{% if " + name + " %}" + _raw(seg.before) + "{{ " + name + " }}" + _raw(seg.after)
                       + ("{% else %}" + _raw(seg.otherwise) if seg.otherwise else "") + "{% endif %}")
    return {"role": message.role, "content": "".join(out)}


def threshold(judge: PortableJudge) -> float:
    """Where promptfoo's pass/fail falls: PASS for a verdict, the scale's middle for a score."""
    if judge.protocol == "range" and not judge.normalize:
        return (judge.score_range[0] + judge.score_range[1]) / 2
    return DEFAULT_PASS_THRESHOLD


def judge_assertion(grader: GraderDefinition, judge: PortableJudge) -> tuple[JsonObject, dict[str, str]]:
    """The assertion and the files it needs (provider and runtime, shared by every judge)."""
    config = {key: value for key, value in judge.config().items() if key != "messages"}
    config["pass_threshold"] = threshold(judge)
    config["grader"] = dump_grader(grader)  # not read by the provider: an import rebuilds the judge from it
    assertion = {
        "type": "llm-rubric",
        "value": getattr(grader, "criteria", None) or grader.name or grader.key,
        "rubricPrompt": [nunjucks(m) for m in judge.messages],
        "provider": {"id": PROVIDER_ID, "config": config},
        "threshold": config["pass_threshold"],
    }
    runtime = (Path(__file__).with_name("_judge_runtime.py")).read_text(encoding="utf-8")
    return assertion, {PROVIDER_FILE: PROVIDER, RUNTIME_FILE: runtime}


def is_studio_judge(provider: JsonValue) -> bool:
    return (isinstance(provider, dict) and provider.get("id") == PROVIDER_ID
            and isinstance(provider.get("config"), dict) and isinstance(provider["config"].get("grader"), dict))


def judge_from(key: str, provider: JsonObject) -> GraderDefinition:
    """The judge an exported assertion was written from (its definition travels in the config)."""
    data = dict(provider["config"]["grader"])
    data["key"] = key
    try:
        return parse_grader(data)
    except ValueError as exc:
        raise PlatformError(f"the judge definition in the provider config is not valid: {exc}") from exc
