"""Rubric judge (Letta model judge): ``{input}``/``{submission}``/``{ground_truth}`` prompt, JSON answer.

Letta's rule for failures is kept (score 0, the error in the rationale) and the outcome is also
marked ``error`` so our results never count a broken call as a real zero.
"""

from __future__ import annotations

import math

from studio.core.json_types import JsonObject
from studio.core.judges.answers import RUBRIC_ANSWER, RUBRIC_TOKENS
from studio.core.judges.http.chat import ChatMessage, ChatRequest, system, user
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.parsing import parse_json_object
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.templates import format_fields, render_format
from studio.core.judges.trace import Trace
from studio.core.judges.variables import extracted_completion
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import Outcome, RubricJudge, Sample

# The built-in prompts (Handlebars), used when a definition brings none. Written for this project;
# sections are wrapped in XML-like tags so a model (and the scripted fake judge) can tell them apart.
RUBRIC_SYSTEM = """You are an evaluator. Grade the submission using the rubric in the user message.
Reply with only a JSON object of the form {"score": <number from 0.0 to 1.0>, "rationale": "<why, in one to three sentences>"}."""

RUBRIC_SUBMISSION_SUFFIX = "\n\nSubmission to grade:\n{submission}"


RESERVED = ("input", "submission", "ground_truth")


def prompt_variables(judge: RubricJudge, sample: Sample) -> JsonObject:
    """Letta's placeholders; the row's ``rubric_vars`` add keys but never replace the three above."""
    rubric_vars = sample.fields.get("rubric_vars") or sample.metadata.get("rubric_vars") or {}
    raw_input = sample.fields.get("input")
    variables: JsonObject = dict(rubric_vars) if isinstance(rubric_vars, dict) else {}
    variables.update(
        input=raw_input if isinstance(raw_input, str) else sample.input_text(),
        submission=extracted_completion(judge, sample),
        ground_truth=sample.expected or "",
    )
    return variables


def build_messages(judge: RubricJudge, sample: Sample) -> list[ChatMessage]:
    template = judge.prompt
    if "submission" not in format_fields(template):
        template += (
            RUBRIC_SUBMISSION_SUFFIX  # a rubric that never shows the submission grades nothing
        )
    return [
        system(judge.system_prompt or RUBRIC_SYSTEM),
        user(render_format(template, prompt_variables(judge, sample))),
    ]


def preview(judge: RubricJudge, sample: Sample) -> RenderedPrompt:
    return RenderedPrompt(
        kind=judge.kind, calls=[RenderedCall(label="grade", messages=build_messages(judge, sample))]
    )


def read_score(text: str) -> tuple[float, str, bool]:
    """(score clamped to [0, 1], rationale, clamped?) from the JSON answer."""
    obj = parse_json_object(text)
    if obj is None:
        raise JudgeError("the judge's answer is not a JSON object with score and rationale")
    value = obj.get("score")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise JudgeError(f"the judge's JSON has no numeric score (got {obj.get('score')!r})")
    clamped = min(1.0, max(0.0, float(value)))
    return clamped, str(obj.get("rationale") or ""), clamped != value


async def score(judge: RubricJudge, sample: Sample, trace: Trace, memo: JsonObject) -> Outcome:
    if not extracted_completion(judge, sample):  # Letta: an empty submission scores 0 before any judge call
        return trace.outcome(score=0.0, rationale="Empty submission - extractor found no content",
                             details={"letta_rule": "empty submission -> score 0"})
    try:
        messages = build_messages(judge, sample)
        request = ChatRequest(
            messages=messages,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            json_mode=True,
            answer_tokens=RUBRIC_TOKENS,
            json_schema=RUBRIC_ANSWER,
        )
        response = await trace.ask("grade", request)
        value, rationale, clamped = read_score(response.text)
    except JudgeError as exc:
        outcome = trace.failure(str(exc), details={"letta_rule": "error -> score 0"})
        return outcome.model_copy(update={"score": 0.0, "rationale": f"Error: {exc}"})
    details: JsonObject = {"clamped": clamped} if clamped else {}
    return trace.outcome(score=value, rationale=rationale, details=details)


KIND = Kind(
    kind="rubric_judge", model=RubricJudge, family="judge", rank=30, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={name: NATIVE for name in ("inspect", "letta", "mka1", "openai", "promptfoo")} | {
        "adaptive": refused("Adaptive has no rubric (score 0..1) judge, only binary PASS/FAIL judges")}, label="Rubric judge", scorer="studio.core.judges.scorer:make_scorer", preview=preview, editor="judge",
    starter={"prompt": "Question: {input}\nAnswer: {submission}\nReference: {ground_truth}\n\n"
                        "Score the answer from 0 to 1 for correctness."},
    default_templates=lambda _variant: ("", ""),
    variables=(("input", "the user's input"), ("submission", "the completion"),
               ("ground_truth", "the expected answer")),
    sample_variables=False,  # a rubric is a Python format string over its own three names
)
