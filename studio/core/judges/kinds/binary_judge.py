"""Binary judge (Adaptive): PASS -> 1.0, FAIL -> 0.0, NA -> skipped (left out of aggregates)."""

from __future__ import annotations

import json

from studio.core.json_types import JsonObject
from studio.core.judges.http.chat import ChatMessage, assistant, system, user
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.templates import CONVERSATION_BLOCK, render_template
from studio.core.judges.trace import Trace
from studio.core.judges.variables import sample_variables
from studio.core.kinds import NATIVE, Kind
from studio.core.models import BinaryJudge, BinaryShot, Outcome, Sample

# The built-in prompts (Handlebars), used when a definition brings none. Written for this project;
# sections are wrapped in XML-like tags so a model (and the scripted fake judge) can tell them apart.
BINARY_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": ["PASS", "FAIL", "NA"]},
        },
        "required": ["reasoning", "verdict"],
    }
)

BINARY_SYSTEM = """You review answers written by an AI assistant. Judge the final response against one criterion.

Criterion:
{{{criteria}}}

Possible verdicts:
- PASS: the response satisfies the criterion.
- FAIL: the response does not satisfy the criterion.
- NA: the criterion does not apply to this conversation at all.

When a reference answer is given, treat it as the ground truth. Reason briefly, then reply with a JSON object that follows this schema:
{{{output_schema}}}"""


VERDICTS = ("PASS", "FAIL", "NA")
SCORES = {"PASS": 1.0, "FAIL": 0.0}


def judge_variables(
    judge: BinaryJudge, sample: Sample, completion: str | None = None
) -> JsonObject:
    variables = sample_variables(judge, sample, completion)
    variables.update(criteria=judge.criteria, output_schema=BINARY_SCHEMA)
    return variables


def shot_sample(shot: BinaryShot) -> Sample:
    return Sample(id="example", messages=shot.messages, completion=shot.completion)


def build_messages(judge: BinaryJudge, sample: Sample) -> list[ChatMessage]:
    system_template = judge.system_template or BINARY_SYSTEM
    user_template = judge.user_template or CONVERSATION_BLOCK
    variables = judge_variables(judge, sample)
    messages = [system(render_template(system_template, variables))]
    for shot in judge.examples:
        shot_vars = judge_variables(judge, shot_sample(shot), completion=shot.completion)
        answer = json.dumps(
            {"reasoning": shot.reasoning, "verdict": shot.verdict}, ensure_ascii=False
        )
        messages += [user(render_template(user_template, shot_vars)), assistant(answer)]
    messages.append(user(render_template(user_template, variables)))
    return messages


def preview(judge: BinaryJudge, sample: Sample) -> RenderedPrompt:
    return RenderedPrompt(
        kind=judge.kind,
        calls=[RenderedCall(label="verdict", messages=build_messages(judge, sample))],
    )


async def score(judge: BinaryJudge, sample: Sample, trace: Trace, memo: JsonObject) -> Outcome:
    messages = build_messages(judge, sample)
    verdict, reasoning = await trace.ask_verdict("verdict", judge, messages, VERDICTS)
    if verdict is None:
        return trace.failure("the judge's answer has no PASS, FAIL or NA verdict")
    details = {"verdict": verdict}
    if verdict == "NA":
        return trace.skipped(reasoning, details=details)
    return trace.outcome(score=SCORES[verdict], rationale=reasoning, details=details)


KIND = Kind(
    kind="binary_judge", model=BinaryJudge, family="judge", rank=10, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={name: NATIVE for name in ("adaptive", "inspect", "mka1", "openai", "promptfoo")}, align="verdict",
    label="Binary judge", scorer="studio.core.judges.scorer:make_scorer", preview=preview, editor="judge",
    starter={"criteria": "The response answers the user's question correctly and directly."},
    default_templates=lambda _variant: (BINARY_SYSTEM, CONVERSATION_BLOCK),
    variables=(("criteria", "the judge's criteria"), ("output_schema", "the JSON answer schema")),
)
