"""Range judge (Adaptive RangeJudgeGrader): reasoning call, then a score call read through logprobs.

score = sum(s * p_s) over the range's integers, p = softmax of their log-probabilities (those
integers only), normalised to [0, 1]. Without logprobs the score is sampled several times (or
parsed once) and ``details["method"]`` says which way the number was made.
"""

from __future__ import annotations

import asyncio
import re

from studio.core.json_types import JsonObject
from studio.core.judges.answers import REASONING_TOKENS
from studio.core.judges.http.chat import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    assistant,
    softmax,
    system,
    user,
)
from studio.core.judges.http.errors import EndpointCallError, JudgeError, ResponseFormatError
from studio.core.judges.http.providers import provider_of
from studio.core.judges.parsing import parse_int_score, parse_numbered_list
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.templates import CONVERSATION_BLOCK, render_handlebars, render_template
from studio.core.judges.trace import Trace
from studio.core.judges.variables import sample_variables
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import Outcome, RangeJudge, RangeShot, Sample

# The built-in prompts (Handlebars), used when a definition brings none. Written for this project;
# sections are wrapped in XML-like tags so a model (and the scripted fake judge) can tell them apart.
RANGE_SYSTEM = """You review answers written by an AI assistant and rate the final response on an integer scale from {{score_min}} to {{score_max}}.

Criteria:
{{{criteria}}}
{{#if subrange_text}}

What the scores mean:
{{{subrange_text}}}
{{/if}}

Evaluation steps:
{{{evaluation_steps_text}}}

Work through the evaluation steps and write down your reasoning. Do not state a score yet: you will be asked for it afterwards."""

RANGE_SCORE_QUESTION = (
    "Now give your score. Reply with SCORE: followed by a single integer from {low} to {high}, "
    "and nothing else."
)

STEPS_SYSTEM = "You design short, concrete procedures that graders follow to evaluate AI responses."

STEPS_USER = """Criteria:
{{{criteria}}}

Score range: {{score_min}} to {{score_max}}.

Write 3 or 4 concise evaluation steps a grader should follow to apply these criteria. Reply with a numbered list, one step per line, and nothing else."""


FALLBACK_SAMPLES = 5
FALLBACK_TEMPERATURE = 1.0
REASONING_PLACEHOLDER = "<the judge's reasoning from the previous call>"


def steps_text(steps: list[str]) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))


def judge_variables(
    judge: RangeJudge, sample: Sample, steps: list[str], completion: str | None = None
) -> JsonObject:
    if problems := judge.problems():  # a stored judge from before the rule: never "10 to 5" in a prompt
        raise JudgeError(f"the range judge is not valid: {'; '.join(problems)}")
    low, high = judge.score_range
    variables = sample_variables(judge, sample, completion)
    variables.update(
        criteria=judge.criteria,
        score_min=low,
        score_max=high,
        evaluation_steps=steps,
        evaluation_steps_text=steps_text(steps),
        subrange_expectations=[s.model_dump() for s in judge.subrange_expectations],
        subrange_text="\n".join(
            f"- {s.min}" + (f" to {s.max}" if s.max != s.min else "") + f": {s.expectation}"
            for s in judge.subrange_expectations
        ),
        output_schema=f"SCORE: <integer from {low} to {high}>",
    )
    return variables


def steps_messages(judge: RangeJudge) -> list[ChatMessage]:
    low, high = judge.score_range
    variables = {"criteria": judge.criteria, "score_min": low, "score_max": high}
    return [system(STEPS_SYSTEM), user(render_handlebars(STEPS_USER, variables))]


def score_question(judge: RangeJudge) -> str:
    low, high = judge.score_range
    return RANGE_SCORE_QUESTION.format(low=low, high=high)


def reasoning_messages(judge: RangeJudge, sample: Sample, steps: list[str]) -> list[ChatMessage]:
    system_template = judge.system_template or RANGE_SYSTEM
    user_template = judge.user_template or CONVERSATION_BLOCK
    variables = judge_variables(judge, sample, steps)
    messages = [system(render_template(system_template, variables))]
    for shot in judge.shots:
        messages += _shot_messages(judge, shot, steps, user_template)
    messages.append(user(render_template(user_template, variables)))
    return messages


def _shot_messages(
    judge: RangeJudge, shot: RangeShot, steps: list[str], template: str
) -> list[ChatMessage]:
    shot_sample = Sample(id="example", messages=shot.messages, completion=shot.completion)
    variables = judge_variables(judge, shot_sample, steps, completion=shot.completion)
    return [
        user(render_template(template, variables)),
        assistant(shot.reasoning),
        user(score_question(judge)),
        assistant(f"SCORE: {shot.score}"),
    ]


def score_messages(
    judge: RangeJudge, reasoning_msgs: list[ChatMessage], reasoning: str
) -> list[ChatMessage]:
    return [*reasoning_msgs, assistant(reasoning), user(score_question(judge))]


def preview(judge: RangeJudge, sample: Sample) -> RenderedPrompt:
    calls: list[RenderedCall] = []
    notes: list[str] = []
    steps = judge.evaluation_steps
    if steps is None:
        calls.append(
            RenderedCall(
                label="evaluation steps (once per run, cached)", messages=steps_messages(judge)
            )
        )
        steps = ["<steps the judge writes in the first call>"]
        notes.append(
            "evaluation steps are not given: the judge writes them once and they are cached"
        )
    reasoning = reasoning_messages(judge, sample, steps)
    calls.append(RenderedCall(label="reasoning", messages=reasoning))
    calls.append(
        RenderedCall(
            label="score (logprobs of the integers in range)",
            messages=score_messages(judge, reasoning, REASONING_PLACEHOLDER),
            note="the assistant turn is the reasoning the judge wrote in the previous call",
        )
    )
    return RenderedPrompt(kind=judge.kind, calls=calls, main=len(calls) - 2, notes=notes)


async def evaluation_steps(
    judge: RangeJudge, trace: Trace, memo: JsonObject
) -> tuple[list[str], bool]:
    """The judge's steps, written once per scorer (and cached across runs by the response cache)."""
    if judge.evaluation_steps is not None:
        return list(judge.evaluation_steps), False
    lock = memo.setdefault("steps_lock", asyncio.Lock())
    async with lock:
        if "steps" not in memo:
            request = ChatRequest(messages=steps_messages(judge), temperature=0.0, max_tokens=400)
            response = await trace.ask("evaluation steps", request)
            steps = parse_numbered_list(response.text)
            if not steps:
                raise ResponseFormatError(
                    "the judge did not write a numbered list of evaluation steps"
                )
            memo["steps"] = steps
    return list(memo["steps"]), True


def logprob_score(response: ChatResponse, low: int, high: int) -> dict[int, float] | None:
    """Probabilities of each integer in range at the score token, or None.

    The score token is the first integer token after "SCORE:" (else the first integer token);
    p = softmax over the range's integers found among that position's top logprobs.
    """
    tokens = response.logprobs or []
    seen = ""
    position = None
    for i, token in enumerate(tokens):
        if _as_int(token.token) is not None:
            if position is None:
                position = i
            if re.search(r"SCORE\s*[:=]\s*$", seen, re.IGNORECASE):
                position = i
                break
        seen += token.token
    if position is None:
        return None
    token = tokens[position]
    value = _as_int(token.token)
    candidates: dict[int, float] = {}
    for alt, logprob in token.top.items():
        alt_value = _as_int(alt)
        if alt_value is not None and low <= alt_value <= high:
            candidates[alt_value] = max(logprob, candidates.get(alt_value, float("-inf")))
    if value is not None and low <= value <= high:
        candidates.setdefault(value, token.logprob)
    return softmax(candidates) if candidates else None


def _as_int(token: str) -> int | None:
    text = token.strip()
    if text.lstrip("-").isdigit() and len(text) <= 4:
        return int(text)
    return None


def normalise(judge: RangeJudge, raw: float) -> float:
    low, high = judge.score_range
    value = (raw - low) / (high - low) if judge.normalize else raw
    return round(value, 12)  # 0.7875, not 0.7874999999999999: float noise is not information


async def score(judge: RangeJudge, sample: Sample, trace: Trace, memo: JsonObject) -> Outcome:
    low, high = judge.score_range
    steps, generated = await evaluation_steps(judge, trace, memo)
    reasoning_msgs = reasoning_messages(judge, sample, steps)
    first = await trace.ask(
        "reasoning",
        ChatRequest(
            messages=reasoning_msgs,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            answer_tokens=REASONING_TOKENS,
        ),
    )
    reasoning = first.text.strip()
    score_msgs = score_messages(judge, reasoning_msgs, reasoning)
    wants_logprobs = (
        trace.client.config.supports_logprobs is not False
        and provider_of(trace.client.config).logprobs
        and "logprobs_refused" not in memo
    )
    request = ChatRequest(
        messages=score_msgs, temperature=judge.temperature, max_tokens=8, logprobs=wants_logprobs
    )
    details: JsonObject = {
        "evaluation_steps": steps,
        "steps_generated": generated,
        "range": [low, high],
    }
    try:
        answer = await trace.ask("score", request)
    except EndpointCallError as exc:
        if not (wants_logprobs and exc.rejected):
            raise
        # the server refuses logprobs (llama.cpp started without logits): sample the score instead,
        # and stop asking for logprobs for the rest of this run
        memo["logprobs_refused"] = str(exc)
        trace.forget_pending("score")
        wants_logprobs = False
        answer = await trace.ask("score", request.model_copy(update={"logprobs": False}))
    if "logprobs_refused" in memo:
        details["logprobs_refused"] = memo["logprobs_refused"]
    probs = logprob_score(answer, low, high) if wants_logprobs else None
    if probs:
        raw = sum(s * p for s, p in probs.items())
        details.update(
            method="logprobs", probabilities={str(s): p for s, p in sorted(probs.items())}
        )
    else:
        raw, method, parsed = await _fallback(judge, score_msgs, answer, trace, memo)
        details.update(method=method, sampled_scores=parsed)
    details["raw_score"] = raw
    return trace.outcome(score=normalise(judge, raw), rationale=reasoning, details=details)


async def _fallback(
    judge: RangeJudge,
    messages: list[ChatMessage],
    first: ChatResponse,
    trace: Trace,
    memo: JsonObject,
) -> tuple[float, str, list[int]]:
    """No usable logprobs: parse the answer, then sample more answers at a higher temperature."""
    low, high = judge.score_range
    samples = int(memo.get("fallback_samples", FALLBACK_SAMPLES))
    parsed = [s for s in [parse_int_score(first.text, low, high)] if s is not None]
    if samples > 1:
        requests = [
            ChatRequest(messages=messages, temperature=FALLBACK_TEMPERATURE, max_tokens=8, seed=i)
            for i in range(1, samples)
        ]
        answers = await asyncio.gather(
            *(trace.ask(f"score sample {i}", r) for i, r in enumerate(requests, 2))
        )
        parsed += [s for a in answers if (s := parse_int_score(a.text, low, high)) is not None]
    if not parsed:
        raise ResponseFormatError(
            f"no logprobs and no integer from {low} to {high} in the judge's answer: {first.text[:120]!r}"
        )
    method = "sampled" if samples > 1 else "parsed"
    return sum(parsed) / len(parsed), method, parsed


KIND = Kind(
    kind="range_judge", model=RangeJudge, family="judge", rank=20, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={name: NATIVE for name in ("inspect", "mka1", "openai", "promptfoo")} | {
        "adaptive": refused("Adaptive's GraderCreateInput has no range judge (RangeJudgeGrader exists only in "
                            "adaptive_harmony recipe code); export it to promptfoo (an llm-rubric that keeps its score "
                            "range) or rewrite it as a binary judge")}, align="score", label="Range judge", scorer="studio.core.judges.scorer:make_scorer", preview=preview, editor="judge",
    starter={
        "criteria": "Rate how well the response answers the user's question.",
        "score_range": [1, 5],
        "evaluation_steps": ["Identify what the user asked.", "Check the answer is correct.",
                             "Assign a score using the criteria."],
        "subrange_expectations": [
            {"min": 1, "max": 2, "expectation": "Wrong, off-topic or a refusal."},
            {"min": 3, "max": 4, "expectation": "Correct but vague or incomplete."},
            {"min": 5, "max": 5, "expectation": "Correct, complete and concise."},
        ],
    },
    default_templates=lambda _variant: (RANGE_SYSTEM, CONVERSATION_BLOCK),
    label_scale=lambda judge: (float(judge.score_range[0]), float(judge.score_range[1])),
    variables=(("criteria", "the judge's criteria"), ("score_min", "lowest score"), ("score_max", "highest score"),
               ("evaluation_steps_text", "numbered evaluation steps"),
               ("subrange_text", "one line per subrange expectation"), ("output_schema", "answer format")),
)
