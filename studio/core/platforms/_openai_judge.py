"""A judge exported to OpenAI graders with the studio's exact messages (``label_model``/``score_model``).

OpenAI's templates only substitute ``{{ item.x }}`` and ``{{ sample.output_text }}``: the judge's fixed
text (system, few-shot turns) is written as it is, each per-sample slot reads the item field of the
same name, and a section (the reference block, shown only when there is a reference) reads an item
field holding it already joined (``reference_section``). The eval export writes those fields on every
item, computed by the studio's own code; ``grader_items`` says which fields a hand-made dataset needs.

What OpenAI cannot carry is said as an ``approximated:`` warning: OpenAI reads the model's answer
with its own structured output (a label, a number) instead of the studio's reading; a label_model
takes no temperature or token limit; NA is a failing label where the studio leaves the sample out;
the range judge's second SCORE call weighted by logprobs becomes one score_model call on its scale.
"""

from __future__ import annotations

import json
import re

from studio.core.json_types import JsonObject
from studio.core.judges.kinds import binary_judge, rubric_judge
from studio.core.models import BinaryJudge, BinaryShot, GraderDefinition, RubricJudge, Turn

from ._base import PlatformError
from ._judge_prompts import SLOT_DOCS, Message, PortableJudge, Section, Slot, section_field
from ._templating import from_jinja

OUTPUT = "{{ sample.output_text }}"
#: measured with bench/judge_export_gap.py: the demo range judge on the 170 demo samples against the
#: scripted judge (not a model), the score of one sampled answer against the logprob-weighted one
RANGE_GAP_NOTE = ("the studio asks a second time for SCORE: and weighs the integers by their logprobs; "
                  "score_model samples one number on the judge's scale (measured on the demo data with the "
                  "scripted judge: 0.125 mean absolute difference on the 0..1 scale, bench/judge_export_gap.py)")


def _literal(text: str) -> str:
    if any(mark in text for mark in ("{{", "{%", "{#")):
        raise PlatformError("the judge's text contains '{{', '{%' or '{#', which OpenAI's templating would read")
    return text


def template(message: Message) -> dict[str, str]:
    out = []
    for seg in message.segments:
        if isinstance(seg, str):
            out.append(_literal(seg))
        elif isinstance(seg, Slot):
            out.append(OUTPUT if seg.name == "completion" else "{{ item." + seg.name + " }}")
        elif isinstance(seg, Section):
            out.append("{{ item." + section_field(seg.name) + " }}")
    return {"role": message.role, "content": "".join(out)}


def item_field_names(judge: PortableJudge) -> list[str]:
    names = []
    for message in judge.messages:
        for seg in message.segments:
            if isinstance(seg, Slot) and seg.name != "completion":
                names.append(seg.name)
            elif isinstance(seg, Section):
                names.append(section_field(seg.name))
    return sorted(set(names))


def check(judge: PortableJudge) -> None:
    for message in judge.messages:
        template(message)


def to_json(grader: GraderDefinition, judge: PortableJudge, warnings: list[str]) -> JsonObject:
    messages = [template(m) for m in judge.messages]
    key = grader.key
    warnings.append(f"{key}: approximated: OpenAI reads the judge's answer with its own structured output, "
                    "not the studio's JSON/verdict reading (the messages are the studio's)")
    if judge.protocol == "verdict":
        warnings.append(f"{key}: approximated: label_model takes no temperature or max tokens, and NA is a "
                        "failing label (the studio leaves an NA sample out)")
        return {"type": "label_model", "name": key, "model": judge.model, "input": messages,
                "labels": list(judge.verdicts), "passing_labels": ["PASS"]}
    params: JsonObject = {"temperature": judge.temperature, "max_completions_tokens": judge.max_tokens}
    if judge.protocol == "rubric":
        warnings.append(f"{key}: approximated: an empty output is graded by the model (the studio scores it 0 "
                        "without a call, Letta's rule)")
        return {"type": "score_model", "name": key, "model": judge.model, "input": messages,
                "range": [0.0, 1.0], "sampling_params": params}
    low, high = judge.score_range
    warnings.append(f"{key}: approximated: {RANGE_GAP_NOTE}; the studio normalises the score to 0..1 "
                    f"((s - {low}) / ({high} - {low}))")
    return {"type": "score_model", "name": key, "model": judge.model, "input": messages,
            "range": [float(low), float(high)], "sampling_params": params}


def notes(grader: GraderDefinition, judge: PortableJudge) -> list[str]:
    fields = item_field_names(judge)
    if not fields:
        return []
    docs = "; ".join(f"{name}: {SLOT_DOCS.get(name.removesuffix('_section'), 'a rubric variable')}"
                     for name in fields)
    return [f"{grader.key}: its prompt reads item fields {', '.join(fields)} ({docs}); "
            "export with --dataset to have them written"]


# ---- import --------------------------------------------------------------------------------------

_SYSTEM_HEAD, _, _SYSTEM_TAIL = binary_judge.BINARY_SYSTEM.partition("{{{criteria}}}")
_SYSTEM_TAIL = _SYSTEM_TAIL.replace("{{{output_schema}}}", binary_judge.BINARY_SCHEMA)
_SHOT = re.compile(r"<conversation>\n(.*)\n</conversation>\n\n<response>\n(.*)\n</response>\n", re.DOTALL)
_TURN = re.compile(r"^(system|user|assistant|document|tool): ", re.MULTILINE)


def _turns(context: str) -> list[Turn]:
    starts = list(_TURN.finditer(context))
    if context and (not starts or starts[0].start() != 0):
        raise PlatformError("a few-shot turn is not 'role: text'")
    turns = []
    for n, match in enumerate(starts):
        end = starts[n + 1].start() - 1 if n + 1 < len(starts) else len(context)
        turns.append(Turn(role=match.group(1), content=context[match.end():end]))
    return turns


def binary_from(key: str, data: JsonObject) -> BinaryJudge | None:
    """The binary judge a label_model was exported from, or None when it is not this module's form."""
    messages = data.get("input") or []
    if len(messages) < 2 or sorted(data.get("labels") or []) != ["FAIL", "NA", "PASS"]:
        return None
    system = messages[0].get("content")
    if not (isinstance(system, str) and system.startswith(_SYSTEM_HEAD) and system.endswith(_SYSTEM_TAIL)):
        return None
    criteria = system[len(_SYSTEM_HEAD): len(system) - len(_SYSTEM_TAIL)]
    examples = []
    middle = messages[1:-1]
    if len(middle) % 2:
        return None
    for shot_user, shot_answer in zip(middle[::2], middle[1::2], strict=True):
        match = _SHOT.fullmatch(str(shot_user.get("content")))
        try:
            answer = json.loads(str(shot_answer.get("content")))
        except ValueError:
            return None
        if match is None or not isinstance(answer, dict):
            return None
        examples.append(BinaryShot(messages=_turns(match.group(1)), completion=match.group(2),
                                   reasoning=str(answer.get("reasoning", "")), verdict=answer.get("verdict", "PASS")))
    return BinaryJudge(key=key, model=data["model"], criteria=criteria, examples=examples)


RUBRIC_FIELDS = {"submission": "sample.output_text", "input": "item.input", "ground_truth": "item.ground_truth"}


def rubric_from(key: str, data: JsonObject) -> RubricJudge | None:
    """The rubric judge a score_model was exported from (0..1, system + user), or None."""
    messages = data.get("input") or []
    if (data.get("range") or [0, 1])[:2] != [0, 1] or len(messages) != 2:
        return None
    system, user = (m.get("content") for m in messages)
    if not (isinstance(system, str) and isinstance(user, str)) or "{{ item.reference }}" in user:
        return None
    try:
        prompt = from_jinja(user, RUBRIC_FIELDS, "item.var_{}")
    except PlatformError:
        return None
    params = data.get("sampling_params") or {}
    return RubricJudge(key=key, model=data["model"], prompt=prompt,
                       system_prompt=None if system == rubric_judge.RUBRIC_SYSTEM else system,
                       temperature=params.get("temperature") or 0.0,
                       max_tokens=params.get("max_completions_tokens"))

