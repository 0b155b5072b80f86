"""Pairwise judge: which of two answers is better (A, B or a tie), always asked in both orders.

Why both orders: an LLM judge tends to prefer whichever answer it reads first (MT-Bench found GPT-4
consistent under a swap on about two thirds of pairs). A sample's verdict therefore stands only
when the two orders agree; otherwise it is "inconsistent", a skipped outcome that says so, never a
tie. The details keep both orders' verdicts (in the original labels) so the run's position
consistency and first-position rate are computed from stored results, resumes included.
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
from studio.core.kinds import Kind, refused
from studio.core.models import Outcome, PairwiseJudge, Sample

VERDICTS = ("A", "B", "TIE")
#: A's score for each sample verdict
SCORES = {"A": 1.0, "B": 0.0, "TIE": 0.5}
#: the verdict in the original labels when the answers were shown swapped
SWAPPED = {"A": "B", "B": "A", "TIE": "TIE"}

PAIRWISE_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "verdict": {"type": "string", "enum": list(VERDICTS)},
        },
        "required": ["reasoning", "verdict"],
    }
)

PAIRWISE_SYSTEM = """You compare two responses written by AI assistants to the same conversation and decide which one is better.

Criterion:
{{{criteria}}}

Possible verdicts:
- A: response A is better.
- B: response B is better.
- TIE: neither is better than the other.

The order the responses are shown in says nothing about their quality, and a longer response is not better for being longer. When a reference answer is given, treat it as the ground truth. Reason briefly, then reply with a JSON object that follows this schema:
{{{output_schema}}}"""

PAIRWISE_USER = """<conversation>
{{{context_str}}}
</conversation>

<response_a>
{{{answer_a}}}
</response_a>

<response_b>
{{{answer_b}}}
</response_b>
{{#if metadata.expected}}

<reference>
{{{metadata.expected}}}
</reference>
{{/if}}"""


def answer_text(sample: Sample, source: str) -> str | None:
    """An answer by its source: ``completion``, else a metadata key, else a key of the original row."""
    if source == "completion":
        return sample.completion
    for place in (sample.metadata, sample.fields):
        value = place.get(source)
        if value is not None:
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return None


def answers(judge: PairwiseJudge, sample: Sample) -> tuple[str, str]:
    a, b = answer_text(sample, judge.answer_a), answer_text(sample, judge.answer_b)
    missing = [name for name, value in ((judge.answer_a, a), (judge.answer_b, b)) if value is None]
    if missing:
        raise JudgeError(f"sample {sample.id} has no {' and no '.join(repr(m) for m in missing)} "
                         "to compare (set answer_a / answer_b to the dataset's fields)")
    return a or "", b or ""


def build_messages(judge: PairwiseJudge, sample: Sample, first: str, second: str) -> list[ChatMessage]:
    """The prompt with ``first`` shown as response A and ``second`` as response B."""
    variables = sample_variables(judge, sample, completion=first)
    variables.update(criteria=judge.criteria, output_schema=PAIRWISE_SCHEMA, answer_a=first, answer_b=second)
    return [
        system(render_template(judge.system_template or PAIRWISE_SYSTEM, variables)),
        user(render_template(judge.user_template or PAIRWISE_USER, variables)),
    ]


def preview(judge: PairwiseJudge, sample: Sample) -> RenderedPrompt:
    try:
        a, b = answers(judge, sample)
    except JudgeError as exc:
        a = b = ""
        notes = [str(exc)]
    else:
        notes = []
    return RenderedPrompt(
        kind=judge.kind,
        calls=[
            RenderedCall(label="A shown first", messages=build_messages(judge, sample, a, b)),
            RenderedCall(label="B shown first (swapped)", messages=build_messages(judge, sample, b, a),
                         note="the same question with the answers swapped; its verdict is mapped back"),
        ],
        notes=notes,
    )


def combine(in_order: str, swapped_back: str) -> str:
    """The sample's verdict from both orders (each in the original labels)."""
    return in_order if in_order == swapped_back else "inconsistent"


async def score(judge: PairwiseJudge, sample: Sample, trace: Trace, memo: JsonObject) -> Outcome:
    a, b = answers(judge, sample)
    (first, why_first), (second, why_second) = await asyncio.gather(
        trace.ask_verdict("A shown first", judge, build_messages(judge, sample, a, b), VERDICTS),
        trace.ask_verdict("B shown first", judge, build_messages(judge, sample, b, a), VERDICTS),
    )
    if first is None or second is None:
        return trace.failure("the judge's answer has no A, B or TIE verdict")
    back = SWAPPED[second]
    verdict = combine(first, back)
    # the verdicts as positions: which answer the judge picked in the slot it read first
    picks = [v for v in (first, second) if v != "TIE"]
    info = {"pairwise": {"verdict": verdict, "ab": first, "ba": back,
                         "first_picks": sum(1 for v in picks if v == "A"), "decisive": len(picks)}}
    rationale = f"A shown first: {why_first}\nB shown first: {why_second}"
    if verdict == "inconsistent":
        return trace.skipped(
            f"inconsistent under the position swap: {first} with A shown first, {back} with B shown "
            f"first.\n{rationale}", details=info)
    return trace.outcome(score=SCORES[verdict], rationale=rationale, details=info)


def pairwise_elsewhere(label: str) -> str:
    """Why a target that does not name the pairwise judge refuses it."""
    return (f"{label} has no pairwise judge that asks in both orders; a pairwise judge is not exported "
            "(its swap rule would be lost)")


KIND = Kind(
    kind="pairwise_judge", model=PairwiseJudge, family="judge", rank=70, icon=("mdi6.compare-horizontal", "#7b4fb0"),
    platforms={"mka1": refused("a pairwise judge compares two outputs of a sample, where an MKA1 grader sees one")}, elsewhere=pairwise_elsewhere, label="Pairwise judge", scorer="studio.core.judges.scorer:make_scorer",
    preview=preview, editor="judge", pairs=True,
    starter={"answer_a": "completion_a", "answer_b": "completion_b"},
    default_templates=lambda _variant: (PAIRWISE_SYSTEM, PAIRWISE_USER),
    variables=(("criteria", "the judge's criteria"), ("output_schema", "the JSON answer schema"),
               ("answer_a", "the answer shown as response A"), ("answer_b", "the answer shown as response B")),
)
