"""The studio's judge prompt as a portable template, so an exported judge sends the same messages.

A judge's messages split in two. The text fixed at export time (the system text with the criteria,
the few-shot turns) is rendered here by the studio's own judge code, so it is the studio's words
exactly. The parts that change per sample (the conversation, the response, the reference, the
rubric's input) are *slots*: each platform writes them in its own templating (OpenAI
``{{ item.x }}``, Nunjucks, Python), and every dataset row an export writes carries the slots'
values computed by the studio's own code (``item_fields``). So the platform's rendering of row N
equals ``grader-studio render`` of sample N; tests prove it with each platform's own renderer.

What cannot travel is refused here with the reason (``PlatformError``), never written wrong: a
judge's own Handlebars templates, evaluation steps the judge writes at run time, a rubric
placeholder with a format spec.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.judges.answers import (
    REASONING_TOKENS,
    RUBRIC_ANSWER,
    RUBRIC_TOKENS,
    VERDICT_TOKENS,
    verdict_schema,
)
from studio.core.judges.http.chat import ChatMessage
from studio.core.judges.http.errors import TemplateError
from studio.core.judges.http.providers import provider_of
from studio.core.judges.kinds import binary_judge, range_judge, rubric_judge
from studio.core.judges.templates import format_fields, render_handlebars
from studio.core.judges.variables import extracted_completion, sample_variables
from studio.core.kinds import ByKind
from studio.core.models import (
    BinaryJudge,
    GraderBase,
    GraderDefinition,
    JudgeBase,
    RangeJudge,
    RubricJudge,
    Sample,
    Turn,
)

from ._base import PlatformError
from ._fields import _MODEL, endpoint_config
from ._fields import export_model as export_model  # re-exported for the CLI


@dataclass(frozen=True)
class Slot:
    """A per-sample value, named as the dataset row's field that holds it."""

    name: str


@dataclass(frozen=True)
class Section:
    """``before + value + after`` when the row's value is not empty, else ``otherwise`` (Handlebars
    ``#if``; pybars keeps the newline before a block that renders nothing)."""

    name: str
    before: str
    after: str
    otherwise: str = ""


Segment = str | Slot | Section


@dataclass(frozen=True)
class Message:
    role: str
    segments: tuple[Segment, ...]

    def slots(self) -> set[str]:
        return {s.name for s in self.segments if not isinstance(s, str)}


@dataclass(frozen=True)
class PortableJudge:
    """One judge as every target writes it: messages, model settings and how the answer is read."""

    key: str
    kind: str
    protocol: Literal["verdict", "rubric", "range"]
    messages: tuple[Message, ...]
    model: str
    temperature: float
    max_tokens: int
    answer_schema: JsonObject | None
    verdicts: tuple[str, ...] = ()
    score_range: tuple[int, int] = (0, 1)
    normalize: bool = True
    score_question: str = ""
    #: ask for the score token's logprobs (the endpoint is OpenAI-compatible and gives them)
    logprobs: bool = False
    provider_kind: str = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 120.0
    notes: tuple[str, ...] = field(default=())

    def slots(self) -> set[str]:
        return set().union(*(m.slots() for m in self.messages))

    def config(self) -> JsonObject:
        """What the exported runtime (``_judge_runtime``) reads: plain JSON, no secrets (the key is an
        environment variable's name)."""
        return {
            "protocol": self.protocol,
            "messages": [message_json(m) for m in self.messages],
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "answer_schema": self.answer_schema,
            "verdicts": list(self.verdicts),
            "score_range": list(self.score_range),
            "normalize": self.normalize,
            "score_question": self.score_question,
            "logprobs": self.logprobs,
            "kind": self.provider_kind,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "request_timeout": self.timeout,
        }


def embedded_runtime(config: JsonObject) -> str:
    """Python source that defines ``_RUNTIME`` (``_judge_runtime.py``, verbatim) and ``JUDGE`` (the
    judge's config): the head of every generated module that grades the studio's way (Inspect, MKA1).
    Needs ``json`` and ``types`` imported before it."""
    import json
    from pathlib import Path

    runtime = Path(__file__).with_name("_judge_runtime.py").read_text(encoding="utf-8")
    text = json.dumps(config, ensure_ascii=False)
    return (
        "# Grader Studio's judge runtime (standard library): fills the messages, reads answers as the studio does\n"
        f"_RUNTIME_SOURCE = {runtime!r}\n"
        "_RUNTIME = types.ModuleType('studio_judge_runtime')\n"
        "exec(compile(_RUNTIME_SOURCE, 'studio_judge_runtime.py', 'exec'), _RUNTIME.__dict__)\n\n"
        "# the judge: its messages (fixed text and per-sample slots), model, temperature, max tokens\n"
        f"JUDGE = json.loads({text!r})\n"
    )


def message_json(message: Message) -> JsonObject:
    parts: JsonArray = []
    for seg in message.segments:
        if isinstance(seg, str):
            parts.append(seg)
        elif isinstance(seg, Slot):
            parts.append({"slot": seg.name})
        else:
            parts.append({"section": seg.name, "before": seg.before, "after": seg.after,
                          "otherwise": seg.otherwise})
    return {"role": message.role, "parts": parts}


# ---- the model an export names -----------------------------------------------------------------

def model_id(judge: GraderBase) -> str:
    """The model id a platform gets: ``--model``, else the judge's model, else its endpoint's model.

    Never the endpoint's *name*: a name means nothing to the platform. Raises when none is known.
    """
    if not isinstance(judge, JudgeBase):  # only a judge names a model (the callers export judges)
        raise TypeError(f"a {judge.kind} grader names no model")
    chosen = _MODEL.get() or judge.model
    if chosen:
        return str(chosen)
    config = endpoint_config(judge.endpoint)
    if config is not None and config.model:
        return str(config.model)
    if judge.endpoint:
        raise PlatformError(f"its endpoint {judge.endpoint!r} is not known to this export, so its model id is "
                            "not either: export from the library or pass --model")
    raise PlatformError("it names no model: set the judge's model or endpoint, or pass --model")


# ---- the per-sample slots ----------------------------------------------------------------------

#: the conversation, the response and the reference as ``CONVERSATION_BLOCK`` shows them
CONVERSATION: tuple[Segment, ...] = (
    "<conversation>\n", Slot("conversation"), "\n</conversation>\n\n<response>\n", Slot("completion"),
    "\n</response>", Section("judge_reference", "\n\n<reference>\n", "\n</reference>", "\n"),
)
#: slot -> what it holds (shown in notes and the dialog)
SLOT_DOCS = {
    "conversation": "the turns before the response, one 'role: text' per line",
    "completion": "the response under judgement",
    "judge_reference": "the expected answer as the judge shows it (empty: the reference section is left out)",
    "input": "the rubric's {input}: the row's input field, else the user turns",
    "ground_truth": "the rubric's {ground_truth}: the expected answer, else empty",
}


def item_fields(sample: Sample, judge: GraderBase | None = None) -> JsonObject:
    """Every slot's value for ``sample``, computed by the studio's own judge code.

    Rubric variables (``rubric_vars`` of the row) become ``var_<name>`` fields, flat, because some
    platforms stringify nested objects before templating.
    """
    probe = judge if judge is not None else BinaryJudge(key="probe", criteria="-")
    variables = sample_variables(probe, sample)
    reference = render_handlebars("{{#if metadata.expected}}{{{metadata.expected}}}{{/if}}", variables)
    raw_input = sample.fields.get("input")
    fields: JsonObject = {
        "id": sample.id,
        "conversation": variables["context_str"],
        "completion": extracted_completion(probe, sample),
        "judge_reference": reference,
        "input": raw_input if isinstance(raw_input, str) else sample.input_text(),
        "ground_truth": sample.expected or "",
    }
    rubric_vars = sample.fields.get("rubric_vars") or sample.metadata.get("rubric_vars") or {}
    if isinstance(rubric_vars, dict):
        for name, value in rubric_vars.items():
            if name not in rubric_judge.RESERVED:
                fields[f"var_{name}"] = value if isinstance(value, str) else format(value)
    return fields


def section_field(name: str) -> str:
    """Where a target without conditionals (OpenAI) finds a section already joined (or empty)."""
    return f"{name}_section"


def section_value(section: Section, fields: Mapping[str, JsonValue]) -> str:
    value = str(fields.get(section.name) or "")
    return section.before + value + section.after if value else section.otherwise


def with_sections(judges: list[PortableJudge], fields: JsonObject) -> JsonObject:
    """``fields`` plus each section's joined text, for targets whose templates only substitute."""
    out = dict(fields)
    for judge in judges:
        for message in judge.messages:
            for seg in message.segments:
                if isinstance(seg, Section):
                    out[section_field(seg.name)] = section_value(seg, fields)
    return out


def render_python(messages: tuple[Message, ...], fields: Mapping[str, JsonValue]) -> list[dict[str, str]]:
    """The messages for one row, filled in plain Python (the self-check every export runs)."""
    out = []
    for message in messages:
        text = []
        for seg in message.segments:
            if isinstance(seg, str):
                text.append(seg)
            elif isinstance(seg, Slot):
                text.append(str(fields[seg.name]))
            else:
                text.append(section_value(seg, fields))
        out.append({"role": message.role, "content": "".join(text)})
    return out


# ---- judges -> portable form ---------------------------------------------------------------------


def _probe() -> Sample:
    return Sample(id="probe", messages=[Turn(role="user", content="probe")], completion="probe")


def _constants(messages: list[ChatMessage]) -> tuple[Message, ...]:
    return tuple(Message(m.role, (m.content,)) for m in messages)


def _no_templates(judge: JudgeBase) -> None:
    if judge.system_template or judge.user_template:
        raise PlatformError("it has its own Handlebars templates, which this target's templating cannot "
                            "reproduce exactly (export it to Adaptive, which runs Handlebars)")
    if judge.extractor is not None and not (judge.extractor.kind == "last_assistant" and not judge.extractor.config):
        raise PlatformError("it grades an extractor's output; the exported judge reads the response text only")


def _settings(judge: JudgeBase, budget: int) -> JsonObject:
    config = endpoint_config(judge.endpoint)
    max_tokens = judge.max_tokens or (config.max_tokens if config is not None else None) or budget
    settings: JsonObject = {"model": model_id(judge), "temperature": float(judge.temperature),
                                "max_tokens": int(max_tokens)}
    if config is not None:
        settings.update(provider_kind=config.kind, base_url=config.base_url, api_key_env=config.api_key_env,
                        timeout=float(config.timeout))
    return settings


#: the judge kinds with a portable template, keyed by kind (``kinds.ByKind``)
_TEMPLATES: ByKind[PortableJudge] = ByKind("portable judge template")


def portable(grader: GraderDefinition) -> PortableJudge:
    """The judge as a portable template; ``PlatformError`` names what cannot travel exactly.

    Every judge is checked on two probe samples (with and without a reference) against the studio's
    own rendering, so a change to the studio's prompts can never export a stale template silently.
    """
    try:
        return _checked(grader)
    except TemplateError as exc:  # a prompt the studio itself cannot render travels nowhere
        raise PlatformError(f"its prompt does not render: {exc}") from exc


def _checked(grader: GraderDefinition) -> PortableJudge:
    template = _TEMPLATES.of(grader)
    judge = template(grader) if template is not None else None
    if judge is not None:
        # a rubric's own placeholders ({tone}) need a value on the probes, as on every real row
        names = {slot.removeprefix("var_") for slot in judge.slots() if slot.startswith("var_")}
        fields = {"rubric_vars": {name: "v" for name in sorted(names)}} if names else {}
        probe = _probe().model_copy(update={"fields": fields})
        referenced = Sample(id="probe-2", messages=[Turn(role="user", content="q")], completion="a", expected="r",
                            fields=fields)
        check_rows(grader, judge, [probe, referenced])
        return judge
    raise PlatformError(f"a {grader.kind.replace('_', ' ')} makes several calls (or uses another platform's "
                        "prompt), which this target cannot carry exactly")


@_TEMPLATES.on(BinaryJudge)
def _binary(judge: BinaryJudge) -> PortableJudge:
    _no_templates(judge)
    fixed = binary_judge.build_messages(judge, _probe())[:-1]  # system text and few-shot turns
    return PortableJudge(
        key=judge.key, kind=judge.kind, protocol="verdict",
        messages=(*_constants(fixed), Message("user", CONVERSATION)),
        answer_schema=verdict_schema(binary_judge.VERDICTS), verdicts=binary_judge.VERDICTS,
        **_settings(judge, VERDICT_TOKENS),
    )


@_TEMPLATES.on(RangeJudge)
def _range(judge: RangeJudge) -> PortableJudge:
    _no_templates(judge)
    if judge.evaluation_steps is None:
        raise PlatformError("its evaluation steps are written by the judge at run time; set them on the judge "
                            "(a run's details show the ones it wrote) so the export can carry them")
    steps = list(judge.evaluation_steps)
    fixed = range_judge.reasoning_messages(judge, _probe(), steps)[:-1]
    settings = _settings(judge, REASONING_TOKENS)
    config = endpoint_config(judge.endpoint)
    logprobs = (provider_of(config).logprobs and config.supports_logprobs is not False) if config is not None else True
    return PortableJudge(
        key=judge.key, kind=judge.kind, protocol="range",
        messages=(*_constants(fixed), Message("user", CONVERSATION)),
        answer_schema=None, score_range=judge.score_range, normalize=judge.normalize,
        score_question=range_judge.score_question(judge), logprobs=logprobs, **settings,
    )


def rubric_segments(template: str) -> tuple[Segment, ...]:
    """A Letta rubric (Python format string) as segments; refuses what only ``str.format`` can do."""
    names = {"input": "input", "submission": "completion", "ground_truth": "ground_truth"}
    out: list[Segment] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise PlatformError(f"the prompt is not a valid format string: {exc}") from exc
    for literal, name, spec, conversion in parsed:
        if literal:
            out.append(literal)
        if name is None:
            continue
        if spec or conversion or not name.isidentifier():
            raise PlatformError(f"placeholder {{{name}}} uses str.format features no template can reproduce")
        out.append(Slot(names.get(name, f"var_{name}")))
    return tuple(out)


@_TEMPLATES.on(RubricJudge)
def _rubric(judge: RubricJudge) -> PortableJudge:
    if judge.extractor is not None and not (judge.extractor.kind == "last_assistant" and not judge.extractor.config):
        raise PlatformError("it grades an extractor's output; the exported judge reads the response text only")
    template = judge.prompt
    if "submission" not in format_fields(template):
        template += rubric_judge.RUBRIC_SUBMISSION_SUFFIX
    system = judge.system_prompt or rubric_judge.RUBRIC_SYSTEM
    return PortableJudge(
        key=judge.key, kind=judge.kind, protocol="rubric",
        messages=(Message("system", (system,)), Message("user", rubric_segments(template))),
        answer_schema=RUBRIC_ANSWER, **_settings(judge, RUBRIC_TOKENS),
    )


def portable_or_reason(grader: GraderDefinition) -> PortableJudge | str:
    try:
        return portable(grader)
    except PlatformError as exc:
        return str(exc)


def check_rows(grader: GraderDefinition, judge: PortableJudge, samples: list[Sample]) -> None:
    """Refuse an export whose messages would differ from the studio's for any row (named by id)."""
    from studio.core.judges.render import render_prompt

    for sample in samples:
        studio = [{"role": m.role, "content": m.content} for m in render_prompt(grader, sample).messages]
        ours = render_python(judge.messages, item_fields(sample, grader))
        if studio != ours:
            raise PlatformError(f"sample {sample.id!r}: the exported prompt of {judge.key!r} would differ "
                                "from the studio's")
