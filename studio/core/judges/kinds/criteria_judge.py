"""Criteria judge (HUD LLMJudgeGrader): one MET/UNMET call per weighted criterion.

A negative weight marks an error criterion (MET = the error is present). value =
clamp(sum(v * w) / sum(positive w), 0, 1) with v = 1 for MET; every verdict is kept in details.
"""

from __future__ import annotations

import asyncio
import json

from studio.core.json_types import JsonObject
from studio.core.judges.http.chat import ChatMessage, system, user
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.templates import render_template
from studio.core.judges.trace import Trace
from studio.core.judges.variables import sample_variables
from studio.core.kinds import Kind, approximated, refused
from studio.core.models import CriteriaJudge, Criterion, Outcome, Sample

# The built-in prompts (Handlebars), used when a definition brings none. Written for this project;
# sections are wrapped in XML-like tags so a model (and the scripted fake judge) can tell them apart.
CRITERION_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": ["MET", "UNMET"]},
        },
        "required": ["reasoning", "verdict"],
    }
)

CRITERION_SYSTEM = """You check one criterion against an answer written by an AI assistant.
{{#if negative}}
This criterion describes a MISTAKE. Reply MET if the mistake is present in the answer, UNMET if it is absent.
{{else}}
Reply MET if the answer satisfies the criterion, UNMET if it does not.
{{/if}}
Reason briefly, then reply with a JSON object that follows this schema:
{{{output_schema}}}"""

CRITERION_USER = """{{#if context_str_without_last_user}}<context>
{{{context_str_without_last_user}}}
</context>

{{/if}}<question>
{{{last_user_turn_content}}}
</question>

<answer>
{{{completion}}}
</answer>

<criterion>
{{{criterion}}}
</criterion>"""


VERDICTS = ("MET", "UNMET")


def build_messages(judge: CriteriaJudge, sample: Sample, criterion: Criterion) -> list[ChatMessage]:
    variables = sample_variables(judge, sample)
    variables.update(
        criteria="\n".join(f"- {c.text} (weight {c.weight:g})" for c in judge.criteria),
        criterion=criterion.text,
        weight=criterion.weight,
        negative=criterion.weight < 0,
        output_schema=CRITERION_SCHEMA,
    )
    return [
        system(render_template(judge.system_template or CRITERION_SYSTEM, variables)),
        user(render_template(judge.user_template or CRITERION_USER, variables)),
    ]


def preview(judge: CriteriaJudge, sample: Sample) -> RenderedPrompt:
    calls = [
        RenderedCall(
            label=f"criterion {i}: {c.text[:60]}", messages=build_messages(judge, sample, c)
        )
        for i, c in enumerate(judge.criteria, 1)
    ]
    return RenderedPrompt(kind=judge.kind, calls=calls)


def combine(weights: list[float], met: list[bool]) -> float:
    positive = sum(w for w in weights if w > 0)
    if positive <= 0:
        raise JudgeError("a criteria judge needs at least one criterion with a positive weight")
    total = sum(w for w, m in zip(weights, met, strict=True) if m)
    return min(1.0, max(0.0, total / positive))


async def score(
    judge: CriteriaJudge, sample: Sample, trace: Trace, memo: JsonObject
) -> Outcome:
    async def one(i: int, criterion: Criterion) -> JsonObject:
        verdict, reasoning = await trace.ask_verdict(
            f"criterion {i}", judge, build_messages(judge, sample, criterion), VERDICTS
        )
        return {
            "criterion": criterion.text,
            "weight": criterion.weight,
            "verdict": verdict,
            "met": verdict == "MET",
            "reasoning": reasoning,
        }

    results = await asyncio.gather(
        *(one(i, c) for i, c in enumerate(judge.criteria, 1)), return_exceptions=True
    )
    verdicts = [r for r in results if isinstance(r, dict)]
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        return trace.failure(str(failures[0]), details={"criteria": verdicts})
    missing = [v["criterion"] for v in verdicts if v["verdict"] is None]
    if missing:
        return trace.failure(
            f"no MET/UNMET verdict for criterion {missing[0]!r}", details={"criteria": verdicts}
        )
    value = combine([v["weight"] for v in verdicts], [v["met"] for v in verdicts])
    rationale = "\n".join(
        f"{v['verdict']} ({v['weight']:+g}) {v['criterion']}: {v['reasoning']}" for v in verdicts
    )
    return trace.outcome(score=value, rationale=rationale, details={"criteria": verdicts})


KIND = Kind(
    kind="criteria_judge", model=CriteriaJudge, family="judge", rank=40, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={"hud": approximated("HUD's LLMJudgeGrader asks about the criteria with its own prompt (the rubric package)"),
               "adaptive": refused("Adaptive has no weighted-criteria judge, only binary PASS/FAIL judges"),
               "mka1": refused("a criteria judge asks about each criterion and combines the answers, which is not "
                               "written as an MKA1 grader")}, label="Criteria judge", scorer="studio.core.judges.scorer:make_scorer", preview=preview, editor="judge",
    starter={"criteria": [{"text": "The answer is factually correct.", "weight": 1.0},
                          {"text": "The answer is concise.", "weight": 0.5}]},
    default_templates=lambda _variant: (CRITERION_SYSTEM, CRITERION_USER),
    variables=(("criterion", "the criterion being judged"), ("criteria", "all criteria with weights"),
               ("weight", "the criterion's weight"), ("output_schema", "the JSON answer schema")),
)
