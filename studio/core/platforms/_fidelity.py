"""What of a grader travels to a platform exactly, what is approximated, what is refused: said before writing.

The export dialog (and anyone else) asks ``fidelity(platform, grader)`` with the library's endpoints
in effect (``export_endpoints``); it runs the pure export once and sorts what it learns into three
lists a person can read: the parts that travel exactly, the ``approximated:`` differences the export
states (with their measured size where known), the settings not carried at all, or the refusal.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from studio.core.kinds import get_kind
from studio.core.models import GraderDefinition

from ._base import Platform, PlatformError
from ._judge_prompts import portable_or_reason
from ._roundtrip import measure

#: the settings each target carries besides the messages, by the judge's protocol
_CARRIED = {
    "promptfoo": {"verdict": "temperature, max tokens and the studio's answer reading",
                  "rubric": "temperature, max tokens and the studio's answer reading (Letta's rules)",
                  "range": "temperature, max tokens and the studio's two-call, logprob-weighted score"},
    "inspect": {"verdict": "temperature, max tokens and the studio's answer reading",
                "rubric": "temperature, max tokens and the studio's answer reading (Letta's rules)",
                "range": "temperature, max tokens and the studio's two-call, logprob-weighted score"},
    "openai": {"rubric": "temperature and max tokens", "range": "temperature and max tokens"},
    "mka1": {"verdict": "temperature, max tokens, the answer schema (text.format) and the studio's answer reading",
             "rubric": "temperature, max tokens, the answer schema (text.format) and the studio's answer "
                       "reading (Letta's rules)",
             "range": "temperature, max tokens and the studio's two-call score, weighted by the score "
                      "token's logprobs (top_logprobs)"},
}
_MARK = "approximated: "


class Fidelity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    exact: list[str] = Field(default_factory=list)
    approximated: list[str] = Field(default_factory=list)
    not_carried: list[str] = Field(default_factory=list)
    #: the fields that do not come back equal when the files are imported back (``_roundtrip``)
    not_read_back: list[str] = Field(default_factory=list)
    refused: str = ""


def exact_parts(target: str, grader: GraderDefinition) -> list[str]:
    """The judge parts that travel word for word to ``target`` (empty for other graders)."""
    if target not in _CARRIED:
        return []
    judge = portable_or_reason(grader)
    if isinstance(judge, str):
        return []
    shots = len(judge.messages) - 2
    messages = "the studio's exact messages: system text, " + (f"{shots} few-shot messages, " if shots else "") \
        + "conversation, response and reference" + (", answer schema" if judge.answer_schema else "")
    parts = [messages, f"model id {judge.model!r}"]
    carried = _CARRIED[target].get(judge.protocol)
    if carried:
        parts.append(carried)
    return parts


def fidelity(platform: Platform, grader: GraderDefinition) -> Fidelity:
    support = platform.can_export(grader)
    if not support.ok:
        return Fidelity(refused=support.reason)
    try:
        result = platform.export(grader)
    except PlatformError as exc:
        return Fidelity(refused=str(exc))
    out = Fidelity(exact=exact_parts(platform.name, grader))
    out.not_read_back = measure(platform, [grader], result).get(grader.key, [])
    carry = platform.carry(get_kind(grader.kind))
    if carry.how == "approximated":  # what the kind declares this platform always changes
        out.approximated.append(carry.reason)
    for warning in result.warnings:
        _, _, text = warning.partition(": ") if warning.startswith(f"{grader.key}: ") else ("", "", warning)
        if text.startswith(_MARK):
            out.approximated.append(text.removeprefix(_MARK))
        else:
            out.not_carried.append(text)
    return out
