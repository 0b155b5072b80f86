"""Pre-built RAG judges (Adaptive): faithfulness, context relevancy, answer relevancy.

Each is a mean of per-item verdicts, and every item's verdict is kept in details for review:
faithfulness = supported claims / claims (context = document turns, else the turns before the
last user turn); context relevancy = relevant documents / documents; answer relevancy = relevant
statements / statements. Claims and statements come from one extraction call to the judge.
"""

from __future__ import annotations

import asyncio

from studio.core.json_types import JsonObject
from studio.core.judges.answers import CLAIMS_ANSWER, CLAIMS_TOKENS
from studio.core.judges.http.chat import ChatMessage, ChatRequest, system, user
from studio.core.judges.http.errors import JudgeError
from studio.core.judges.parsing import parse_json_list, split_sentences
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.templates import render_template
from studio.core.judges.trace import Trace
from studio.core.judges.variables import before_last_user, format_turns, sample_variables
from studio.core.kinds import NATIVE, Kind, approximated, refused
from studio.core.models import Outcome, PrebuiltJudge, Sample

# The built-in prompts (Handlebars), used when a definition brings none. Written for this project;
# sections are wrapped in XML-like tags so a model (and the scripted fake judge) can tell them apart.
CLAIMS_SYSTEM = """You break a text into atomic claims: short, self-contained factual statements that can each be checked on their own. Resolve pronouns using the question. Do not add anything the text does not say.
Reply with only a JSON array of strings."""

CLAIMS_USER = """<question>
{{{last_user_turn_content}}}
</question>

<text>
{{{completion}}}
</text>"""

FAITHFULNESS_SYSTEM = """You check whether a claim is supported by a context.
SUPPORTED: the context states the claim or directly implies it.
UNSUPPORTED: the context contradicts the claim or does not contain the information.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "SUPPORTED" or "UNSUPPORTED"}."""

FAITHFULNESS_USER = """<context>
{{{context}}}
</context>

<claim>
{{{claim}}}
</claim>"""

CONTEXT_RELEVANCY_SYSTEM = """You check whether a retrieved document is relevant to a question.
RELEVANT: the document contains information that helps answer the question.
IRRELEVANT: it does not.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "RELEVANT" or "IRRELEVANT"}."""

CONTEXT_RELEVANCY_USER = """<question>
{{{last_user_turn_content}}}
</question>

<document>
{{{document}}}
</document>"""

ANSWER_RELEVANCY_SYSTEM = """You check whether one statement from an answer addresses the question that was asked.
RELEVANT: the statement helps answer the question.
IRRELEVANT: the statement is off-topic or adds information the user did not ask for.
Reply with a JSON object: {"reasoning": "<one sentence>", "verdict": "RELEVANT" or "IRRELEVANT"}."""

ANSWER_RELEVANCY_USER = """<question>
{{{last_user_turn_content}}}
</question>

<statement>
{{{statement}}}
</statement>"""


# metric -> (item name, system prompt, user prompt, positive verdict, negative verdict)
METRICS: dict[str, tuple[str, str, str, str, str]] = {
    "faithfulness": ("claim", FAITHFULNESS_SYSTEM, FAITHFULNESS_USER, "SUPPORTED", "UNSUPPORTED"),
    "context_relevancy": (
        "document",
        CONTEXT_RELEVANCY_SYSTEM,
        CONTEXT_RELEVANCY_USER,
        "RELEVANT",
        "IRRELEVANT",
    ),
    "answer_relevancy": (
        "statement",
        ANSWER_RELEVANCY_SYSTEM,
        ANSWER_RELEVANCY_USER,
        "RELEVANT",
        "IRRELEVANT",
    ),
}
CRITERIA_TEXT = {
    "faithfulness": "Every claim in the response is supported by the context.",
    "context_relevancy": "Every retrieved document is relevant to the question.",
    "answer_relevancy": "Every statement in the response addresses the question.",
}


def rag_context(sample: Sample) -> str:
    """Document turns (one chunk each) when present, else the conversation before the last user turn."""
    documents = [t.content for t in sample.messages if t.role == "document"]
    if documents:
        return "\n\n".join(documents)
    return format_turns(before_last_user(list(sample.messages)))


def base_variables(judge: PrebuiltJudge, sample: Sample) -> JsonObject:
    variables = sample_variables(judge, sample)
    variables.update(criteria=CRITERIA_TEXT[judge.metric_type], context=rag_context(sample))
    return variables


def claims_messages(judge: PrebuiltJudge, sample: Sample) -> list[ChatMessage]:
    variables = base_variables(judge, sample)
    return [system(CLAIMS_SYSTEM), user(render_template(CLAIMS_USER, variables))]


def item_messages(judge: PrebuiltJudge, sample: Sample, item: str) -> list[ChatMessage]:
    name, system_prompt, user_prompt, positive, negative = METRICS[judge.metric_type]
    variables = base_variables(judge, sample)
    variables.update({name: item, "item_text": item, "output_schema": f"{positive} or {negative}"})
    return [
        system(render_template(judge.system_template or system_prompt, variables)),
        user(render_template(judge.user_template or user_prompt, variables)),
    ]


def preview(judge: PrebuiltJudge, sample: Sample) -> RenderedPrompt:
    calls: list[RenderedCall] = []
    notes: list[str] = []
    if judge.metric_type == "context_relevancy":
        items = [t.content for t in sample.messages if t.role == "document"]
        if not items:
            notes.append("the sample has no document turns: nothing to judge")
    else:
        calls.append(
            RenderedCall(label="split into claims", messages=claims_messages(judge, sample))
        )
        items = split_sentences(base_variables(judge, sample)["completion"])
        notes.append(
            "claims below are a sentence split; at run time they are the judge's own claims"
        )
    name = METRICS[judge.metric_type][0]
    for i, item in enumerate(items, 1):
        calls.append(RenderedCall(label=f"{name} {i}", messages=item_messages(judge, sample, item)))
    return RenderedPrompt(
        kind=judge.kind, calls=calls, main=min(1, len(calls) - 1) if calls else 0, notes=notes
    )


async def _claims(judge: PrebuiltJudge, sample: Sample, trace: Trace) -> tuple[list[str], str]:
    response = await trace.ask(
        "split into claims",
        ChatRequest(
            messages=claims_messages(judge, sample),
            temperature=0.0,
            answer_tokens=CLAIMS_TOKENS,
            json_schema=CLAIMS_ANSWER,
        ),
    )
    parsed = parse_json_list(response.text)
    if parsed is not None and all(isinstance(x, str) for x in parsed):
        return [x.strip() for x in parsed if x.strip()], "judge"
    return split_sentences(base_variables(judge, sample)["completion"]), "sentences"


async def score(
    judge: PrebuiltJudge, sample: Sample, trace: Trace, memo: JsonObject
) -> Outcome:
    name, _, _, positive, negative = METRICS[judge.metric_type]
    details: JsonObject = {"metric": judge.metric_type}
    if judge.metric_type == "context_relevancy":
        items = [t.content for t in sample.messages if t.role == "document"]
        if not items:
            return trace.skipped("no document turns to judge", details=details)
    else:
        if judge.metric_type == "faithfulness" and not rag_context(sample).strip():
            return trace.skipped("no context to check claims against", details=details)
        items, method = await _claims(judge, sample, trace)
        details["claims_from"] = method
        if not items:
            return trace.skipped("the response makes no claims", details=details)

    async def one(i: int, item: str) -> JsonObject:
        verdict, reasoning = await trace.ask_verdict(
            f"{name} {i}", judge, item_messages(judge, sample, item), (positive, negative)
        )
        if verdict is None:
            raise JudgeError(f"no {positive}/{negative} verdict for {name} {i}")
        return {name: item, "verdict": verdict, "ok": verdict == positive, "reasoning": reasoning}

    results = await asyncio.gather(
        *(one(i, x) for i, x in enumerate(items, 1)), return_exceptions=True
    )
    verdicts = [r for r in results if isinstance(r, dict)]
    details[f"{name}s"] = verdicts
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        return trace.failure(str(failures[0]), details=details)
    good = sum(1 for v in verdicts if v["ok"])
    details.update(passed=good, total=len(verdicts))
    rationale = "\n".join(f"{v['verdict']}: {v[name]}" for v in verdicts)
    return trace.outcome(score=good / len(verdicts), rationale=rationale, details=details)


def default_templates(metric_type: str) -> tuple[str, str]:
    if metric_type not in METRICS:
        return "", ""
    _name, system, user, *_ = METRICS[metric_type]
    return system, user


KIND = Kind(
    kind="prebuilt", model=PrebuiltJudge, family="judge", rank=60, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={"adaptive": NATIVE,
               "promptfoo": approximated("promptfoo's context-faithfulness/relevance assertions use their own prompts"),
               "mka1": refused("a prebuilt RAG judge makes several dependent calls (statements, then verdicts), which "
                               "are not written as an MKA1 grader")}, label="Pre-built RAG judge", scorer="studio.core.judges.scorer:make_scorer", preview=preview, editor="judge",
    starter={"metric_type": "faithfulness"}, default_templates=default_templates,
    calls_note="its calls depend on the claims the judge finds; one claim a sample assumed",
    variables=(("context", "the retrieved context"), ("item_text", "the claim/document/statement judged"),
               ("criteria", "what the metric checks"), ("output_schema", "answer format")),
)
