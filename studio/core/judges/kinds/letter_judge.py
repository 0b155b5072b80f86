"""Letter-grade judge (Inspect's model_graded_qa / model_graded_fact): one user prompt, ``GRADE: X``.

The prompt is the definition's Python format string over ``question`` (the last user message, or the
conversation through the completion when ``include_history``), ``answer``, ``criterion`` (the expected answer),
``instructions`` and the sample's metadata; ``[BEGIN DATA]``/``[END DATA]`` written inside the
sample's own text are defused (``[END-DATA]``) so a completion cannot close the data block. The
grade is the word after the *last* ``GRADE:`` (the verdict the instructions ask to end with): with
the default instructions and pattern a spelled-out word (Correct, Partial, Incorrect) counts as its
letter and only the offered letters count (C/I, or C/P/I with partial credit); a definition's own
``grade_pattern`` takes its first group as it is. C scores 1.0, P 0.5, I 0.0 (and yes/no/true/false
or a number as Inspect reads a value); no usable grade is an error, as Inspect leaves it unscored.
"""

from __future__ import annotations

import math
import re

from studio.core import saferegex
from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.chat import ChatMessage, ChatRequest, user
from studio.core.judges.render import RenderedCall, RenderedPrompt
from studio.core.judges.trace import Trace
from studio.core.judges.variables import extracted_completion
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import LetterJudge, Outcome, Sample, Turn

# Our wording of the default grading instructions; {letters} is CI or CPI. The exact text matters to
# reproduce Inspect's prompt: tests/conformance compares the prompt with inspect-ai's own.
_INSTRUCTIONS = (
    "\nAfter assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER is "
    "one of {letters}.  Please choose ONE option for the grade: either \"C\" for correct answers, "
    "{partial}or \"I\" for incorrect answers.\n\nFor example, after reviewing a correct answer you might "
    "write 'GRADE: C' or after reviewing an incorrect answer you might write 'GRADE: I'.\n\nFirst, write "
    "out in a step by step manner your reasoning about the criterion to be sure that your conclusion is "
    "correct. Avoid simply stating the correct answers at the outset. Then, end with your answer "
    "formatted as 'GRADE: $LETTER' (without quotes) where LETTER is one of {letters}.\n"
)
_SPACING = r"[\s\u200b\u200c\u200d\u200e\u200f\u2060\u2063\ufeff]*"
LETTER_PATTERN = rf"(?is).*(?<!\w)GRADE(?!\w){_SPACING}:{_SPACING}([CPI])"
_LETTER = re.compile(LETTER_PATTERN)
_ANY_WORD = re.compile(rf"(?is).*(?<!\w)GRADE(?!\w){_SPACING}:{_SPACING}(\w*)")
_WORDS = {"c": "C", "correct": "C", "i": "I", "incorrect": "I", "p": "P", "partial": "P"}
_DELIMITER = re.compile(r"\[(BEGIN|END) DATA\]", re.IGNORECASE)
_RESERVED = ("question", "answer", "criterion", "instructions")


def default_instructions(partial_credit: bool) -> str:
    return _INSTRUCTIONS.format(letters="CPI" if partial_credit else "CI",
                                partial='"P" for partially correct answers,' if partial_credit else "")


def defuse(value: JsonValue) -> JsonValue:
    """``[BEGIN DATA]``/``[END DATA]`` in the sample's text become ``[BEGIN-DATA]``/``[END-DATA]``."""
    if isinstance(value, str):
        return _DELIMITER.sub(lambda m: m.group(0).replace(" ", "-"), value)
    if isinstance(value, dict):
        return {k: defuse(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(defuse(v) for v in value)
    return value


def history(sample: Sample, answer: str) -> str:
    """The conversation through its last assistant turn (the completion): the first turn's text, then
    ``User: ...`` / ``Assistant: ...`` / ``Tool (name): ...`` paragraphs, system turns left out."""
    turns = [t for t in sample.messages if t.role != "system"] + [Turn(role="assistant", content=answer)]
    last = max(n for n, t in enumerate(turns) if t.role == "assistant")
    lines: list[str] = []
    for n, turn in enumerate(turns[:last + 1]):
        if n == 0:
            lines.append(turn.content)
        elif turn.role == "user":
            lines.append(f"User: {turn.content}")
        elif turn.role == "assistant":
            lines.append(f"Assistant: {turn.content}")
        elif turn.role == "tool":
            lines.append(f"Tool ({turn.name or ''}): {turn.content}")
    return "\n\n".join(lines)


def prompt_text(judge: LetterJudge, sample: Sample) -> str:
    metadata = {k: defuse(v) for k, v in sample.metadata.items() if k not in _RESERVED}
    answer = extracted_completion(judge, sample)
    question = history(sample, answer) if judge.include_history else sample.input_text()
    return judge.template.format(
        question=defuse(question),
        answer=defuse(answer),
        criterion=defuse(sample.expected or ""),
        instructions=judge.instructions or default_instructions(judge.partial_credit),
        **metadata,
    )


def build_messages(judge: LetterJudge, sample: Sample) -> list[ChatMessage]:
    return [user(prompt_text(judge, sample))]


def preview(judge: LetterJudge, sample: Sample) -> RenderedPrompt:
    return RenderedPrompt(kind=judge.kind, calls=[RenderedCall(label="grade", messages=build_messages(judge, sample))])


def read_grade(judge: LetterJudge, text: str) -> str | None:
    """The grade in the judge's answer, or None when it has no usable one."""
    default_pattern = judge.grade_pattern is None
    offered_only = default_pattern and not judge.instructions
    if judge.grade_pattern:  # the author's pattern never runs unbounded (studio.core.saferegex)
        found: saferegex.Found | re.Match[str] | None = saferegex.search(judge.grade_pattern, text)
    else:
        found = (_ANY_WORD if offered_only else _LETTER).search(text)
    value = found.group(1) if found else None
    if value is not None and default_pattern:
        word = value.strip()
        value = _WORDS.get(word.lower()) or (word.upper() if len(word) == 1 else None)
        if offered_only and value not in (("C", "P", "I") if judge.partial_credit else ("C", "I")):
            value = None
    return value


def grade_value(grade: str) -> float:
    """C 1.0, P 0.5, I and N 0.0; yes/true 1.0, no/false 0.0, a finite number as itself; else 0.0."""
    fixed = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
    if grade in fixed:
        return fixed[grade]
    lowered = grade.lower()
    if lowered in ("yes", "true"):
        return 1.0
    if lowered in ("no", "false"):
        return 0.0
    try:
        number = float(lowered)
    except ValueError:
        return 0.0
    return number if math.isfinite(number) else 0.0


async def score(judge: LetterJudge, sample: Sample, trace: Trace, memo: JsonObject) -> Outcome:
    request = ChatRequest(messages=build_messages(judge, sample), temperature=judge.temperature,
                          max_tokens=judge.max_tokens)
    response = await trace.ask("grade", request)
    try:
        grade = read_grade(judge, response.text)
    except (re.error, saferegex.RegexFailure) as exc:
        return trace.failure(f"grade_pattern: {exc}")
    if grade is None:
        return trace.failure(f"Grade not found in the judge's answer: {response.text[:200]!r}")
    return trace.outcome(score=grade_value(grade), rationale=response.text.strip(), details={"grade": grade})


KIND = Kind(
    kind="letter_judge", model=LetterJudge, family="judge", rank=50, icon=("mdi6.scale-balance", "#7b4fb0"),
    platforms={"inspect": NATIVE,
               "adaptive": refused("Adaptive has no letter-grade (C/P/I) judge, only binary PASS/FAIL judges; export it "
                                   "to Inspect AI (model_graded_qa/model_graded_fact with the same template and grading)"),
               "mka1": refused("a letter judge uses Inspect's model-graded prompt and grade letters (export it to "
                               "Inspect AI, where it is native)")}, label="Letter-grade judge (Inspect)", scorer="studio.core.judges.scorer:make_scorer",
    preview=preview, editor="judge", sample_variables=False, default_templates=lambda _variant: ("", ""),
    starter={"template": "[Task]: {question}\n[Submission]: {answer}\n[Criterion]: {criterion}\n\n"
                         "Does the submission meet the criterion?\n{instructions}"},
    variables=(("question", "the last user message (or the conversation)"), ("answer", "the completion"),
               ("criterion", "the expected answer"), ("instructions", "the grading instructions")),
)
