"""The scripted judge behind ``grader-studio fake-judge``: deterministic rules, not a model.

It recognises the task from Grader Studio's built-in prompts and answers by simple rules (a
response containing the reference answer passes; a claim is supported when its words appear in
the context). Tests and demos steer it with markers placed anywhere in a sample's text:

* ``[[judge:PASS]]`` / ``FAIL`` / ``NA`` / ``MET`` / ``UNMET`` / ``SUPPORTED`` / ``UNSUPPORTED`` /
  ``RELEVANT`` / ``IRRELEVANT``: the verdict to give;
* ``[[judge:score=4]]`` (range or rubric score), ``[[judge:probs=0.05,0.05,0.1,0.3,0.5]]``
  (probabilities of each integer of the range, lowest first, returned as top logprobs);
* ``[[fault:KIND]]``, ``[[fault:KINDxN]]``, ``[[fault:KINDxN@SECONDS]]`` with KIND one of 429,
  500, slow, malformed, drop, endless (a 2 GiB body): fail the first N identical requests (every one when N is absent).

A judge may also be biased on purpose (``bias``), to test the bias probes against known answers:
``first`` always prefers the answer it reads first (pairwise), ``length`` passes any response of
``LONG_WORDS`` words or more and prefers the longer answer, ``no-reference`` judges without
looking at the reference answer. Without a bias the rules are symmetric and use the reference.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from studio.core.json_types import JsonObject
from studio.core.judges.parsing import split_sentences

from .fake_shots import learned_answer

LABEL = "grader-studio fake-judge (a scripted judge, not a model)"
_STOPWORD_TEXT = (
    "a an the and or of to in on at for by with from as is are was were be been it its this that "
    "these those who what which when where why how does did do has have had not no yes you your "
    "i we they he she them his her our their there here than then so if but into about over"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MARKER = re.compile(r"\[\[judge:([A-Za-z_]+)(?:=([^\]]*))?\]\]")
#: the judge's biases (``None`` is the unbiased judge)
BIASES = ("first", "length", "no-reference")
#: from this many words on, the length-biased judge passes a response whatever it says
LONG_WORDS = 40
_FAULT = re.compile(r"\[\[fault:(429|500|slow|malformed|drop|endless)(?:x(\d+))?(?:@([\d.]+))?\]\]")


@dataclass
class Rule:
    """Programmatic script: when ``pattern`` matches the request text, answer ``reply``."""

    pattern: str
    reply: str | None = None
    probs: list[float] | None = None
    fault: str | None = None
    times: int | None = None
    delay: float | None = None
    used: int = 0


@dataclass
class Answer:
    text: str
    # (token, logprob, {alternative: logprob}) for the tokens a client may inspect
    tokens: list[tuple[str, float, dict[str, float]]] = field(default_factory=list)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()) if w not in STOPWORDS}


def normalise(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def section(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return match.group(1).strip() if match else None


def markers(text: str) -> dict[str, str]:
    return {name.lower(): (value or "") for name, value in _MARKER.findall(text)}


def find_fault(text: str) -> tuple[str, int | None, float | None] | None:
    match = _FAULT.search(text)
    if not match:
        return None
    kind, times, delay = match.groups()
    return kind, int(times) if times else None, float(delay) if delay else None


RESPONSE_LABELS = ("response", "answer", "submission", "completion", "prediction", "output")
REFERENCE_LABELS = ("reference", "expected", "ground truth", "ground_truth", "target")
REFUSAL = re.compile(
    r"\b(i don't know|i do not know|i cannot|i can't|sorry|unable to)\b", re.IGNORECASE
)


def labelled(text: str, names: tuple[str, ...]) -> str | None:
    """A section by ``<name>`` tag, else by a ``Name ...:`` label (value on the line or below)."""
    for name in names:
        found = section(text, name)
        if found is not None:
            return found
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = rf"(?im)^[ \t]*(?:[a-z]+ )?(?:{alternatives})\b[^:\n]{{0,40}}:[ \t]*(.*)$"
    matches = list(re.finditer(pattern, text))
    if not matches:
        return None
    match = matches[-1]
    if match.group(1).strip():
        return match.group(1).strip()
    below = text[match.end() :].lstrip("\n")
    return re.split(r"\n[ \t]*\n", below, maxsplit=1)[0].strip()


def contains_reference(response: str, reference: str) -> bool:
    """The reference appears in the response; for a long reference, most of its words do."""
    ref = normalise(reference)
    if not ref:
        return False
    if ref in normalise(response):
        return True
    needed = words(reference)
    return len(needed) >= 4 and len(needed & words(response)) >= 0.6 * len(needed)


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def supported(claim: str, context: str) -> bool:
    """Most of the claim's words, and every number in it, appear in the context."""
    needed = words(claim)
    if not needed or not set(_NUMBER.findall(claim)) <= set(_NUMBER.findall(context)):
        return False
    return len(needed & words(context)) >= 0.75 * len(needed)


class ScriptedJudge:
    def __init__(self, rules: list[Rule] | None = None, bias: str | None = None) -> None:
        if bias is not None and bias not in BIASES:
            raise ValueError(f"unknown bias {bias!r}; choose one of {', '.join(BIASES)}")
        self.rules = rules or []
        self.bias = bias

    def correct(self, response: str, reference: str | None) -> bool:
        """The scripted rule for "this response is right", bent by the judge's bias."""
        if self.bias == "length" and len(response.split()) >= LONG_WORDS:
            return True
        if not reference or self.bias == "no-reference":
            return bool(response.strip()) and not REFUSAL.search(response)
        return contains_reference(response, reference)

    def answer(self, messages: list[JsonObject]) -> Answer:
        contents = [str(m.get("content") or "") for m in messages]
        everything = "\n".join(contents)
        system = next(
            (c for m, c in zip(messages, contents, strict=True) if m.get("role") == "system"), ""
        )
        users = [c for m, c in zip(messages, contents, strict=True) if m.get("role") == "user"]
        last = users[-1] if users else ""
        for rule in self.rules:
            if rule.reply is not None and re.search(rule.pattern, everything, re.DOTALL):
                return self._scripted(rule, last)
        if "<response_a>" in last and "<response_b>" in last:
            return self._pairwise(last)
        if "SCORE:" in last and "integer from" in last:
            subject = users[-2] if len(users) >= 2 else last
            return self._score(last, subject, learned_answer(messages[:-2], subject))
        if "evaluation steps" in last and "numbered list" in last:
            return Answer(
                "1. Read the criteria and note what a top answer must contain.\n"
                "2. Compare the response with the question and any reference answer.\n"
                "3. Note missing, wrong or irrelevant content.\n"
                "4. Choose the score whose description fits best."
            )
        if '{"result"' in system:  # an OpenAI score_model / label_model grader (graders/openai_grader.py)
            return self._openai_result(system, last)
        if "GRADE: $LETTER" in last:
            return self._letter(last)
        if "atomic claims" in system:
            return Answer(json.dumps(split_sentences(section(last, "text") or last)))
        if "UNSUPPORTED" in system:
            return self._verdict(last, ("SUPPORTED", "UNSUPPORTED"), self._supported(last))
        if "IRRELEVANT" in system:
            return self._verdict(last, ("RELEVANT", "IRRELEVANT"), self._relevant(last))
        if "UNMET" in system:
            return self._verdict(last, ("MET", "UNMET"), self._met(last))
        if '"score"' in system + last and "rationale" in system + last:
            return self._rubric(last)
        if "PASS" in system and "FAIL" in system:
            return self._binary(last, learned_answer(messages, last))
        if "asked for it afterwards" in system:
            return Answer(
                "The response was compared with the criteria and the evaluation steps, one by one."
            )
        if "incorrect" in everything and "verdict" in everything:
            return self._correctness(everything)
        text = f"OK. This is a scripted reply from {LABEL}."
        return Answer(text, _word_tokens(text))

    # --- tasks -------------------------------------------------------------------------------
    def _scripted(self, rule: Rule, last: str) -> Answer:
        text = rule.reply or ""
        if rule.probs:
            low, _ = _range_of(last) or (1, len(rule.probs))
            return _score_answer(text, low, rule.probs)
        return Answer(text, _word_tokens(text))

    def _score(self, question: str, subject: str, learned: str | None = None) -> Answer:
        low, high = _range_of(question) or (1, 5)
        found = markers(subject)
        if learned is not None and learned.lstrip("-").isdigit() and "score" not in found:
            found["score"] = learned
        if "probs" in found:
            probs = [float(x) for x in found["probs"].split(",") if x.strip()]
        else:
            if "score" in found:
                chosen = int(float(found["score"]))
            else:
                reference = labelled(subject, REFERENCE_LABELS)
                response = labelled(subject, RESPONSE_LABELS) or ""
                if not reference and self.bias is None:
                    chosen = (low + high) // 2
                else:
                    chosen = high if self.correct(response, reference) else low
            chosen = min(high, max(low, chosen))
            n = high - low + 1
            probs = [0.8 if s == chosen else 0.2 / (n - 1) for s in range(low, high + 1)]
        best = low + max(range(len(probs)), key=lambda i: probs[i])
        return _score_answer(f"SCORE: {best}", low, probs)

    def _letter(self, text: str) -> Answer:
        """A letter-grade (Inspect model_graded) prompt: C when the submission holds the reference."""
        def field(name: str) -> str:
            found = re.search(rf"\[{name}\]:[ \t]*(.*?)\n(?:\*+|\[END DATA\])", text, re.DOTALL)
            return found.group(1).strip() if found else ""

        response = field("Submission")
        reference = field("Expert") or field("Criterion")
        found = markers(response)
        grade = found["grade"].upper() if "grade" in found else (
            "C" if reference and contains_reference(response, reference) else "I")
        reply = f"The submission was compared with the reference, step by step.\nGRADE: {grade}"
        return Answer(reply, _word_tokens(reply))

    def _verdict(self, text: str, options: tuple[str, str], default: bool) -> Answer:
        found = markers(text)
        for option in options:
            if option.lower() in found:
                default = option == options[0]
        verdict = options[0] if default else options[1]
        body = json.dumps({"reasoning": f"Scripted rule gave {verdict}.", "verdict": verdict})
        return Answer(body, _word_tokens(body))

    def _supported(self, text: str) -> bool:
        return supported(section(text, "claim") or "", section(text, "context") or "")

    def _relevant(self, text: str) -> bool:
        """A document shares a word with the question; a statement is relevant unless scripted."""
        document = section(text, "document")
        if document is None:
            return True
        return bool(words(section(text, "question") or "") & words(document))

    def _met(self, text: str) -> bool:
        criterion = _MARKER.sub("", section(text, "criterion") or "")
        answer = section(text, "answer") or ""
        context = section(text, "context") or ""
        quoted = re.findall(r"['\"“]([^'\"”]+)['\"”]", criterion)
        if quoted:
            return all(normalise(q) in normalise(answer) for q in quoted)
        if "MISTAKE" in text:  # error criterion: MET when the answer has numbers the context lacks
            numbers = set(_NUMBER.findall(answer))
            return bool(context) and not numbers <= set(_NUMBER.findall(context))
        if re.search(r"support|document|context|grounded", criterion, re.IGNORECASE) and context:
            claims = [c for c in re.split(r"(?<=[.!?])\s+", answer) if c.strip()]
            return bool(claims) and all(supported(c, context) for c in claims)
        return bool(answer.strip()) and not REFUSAL.search(answer)

    def _openai_result(self, system: str, last: str) -> Answer:
        """``{"result": ...}``: a score ``from L to H`` (H when the answer holds the expected text, else
        L), or the first of the labels ``A or B`` (the second for an empty or refusing answer)."""
        response = labelled(last, RESPONSE_LABELS) or last
        scale = re.search(r"from (-?\d+(?:\.\d+)?) to (-?\d+(?:\.\d+)?)", system)
        labels = re.search(r": (\w+) or (\w+)\.", system)
        result: object
        if labels and not scale:
            result = labels.group(1) if self.correct(response, None) else labels.group(2)
        else:
            low, high = (float(scale.group(1)), float(scale.group(2))) if scale else (0.0, 1.0)
            result = high if self.correct(response, labelled(last, REFERENCE_LABELS)) else low
        body = json.dumps({"result": result})
        return Answer(body, _word_tokens(body))

    def _rubric(self, text: str) -> Answer:
        found = markers(text)
        if "score" in found:
            value = float(found["score"])
        else:
            reference = labelled(text, REFERENCE_LABELS)
            response = labelled(text, RESPONSE_LABELS)
            if response is not None and (reference or self.bias is not None):
                value = 1.0 if self.correct(response, reference) else 0.0
            else:
                value = 0.5
        body = json.dumps({"score": value, "rationale": f"Scripted rule gave {value:g}."})
        return Answer(body, _word_tokens(body))

    def _binary(self, text: str, learned: str | None = None) -> Answer:
        found = markers(text)
        verdict = next((v for v in ("PASS", "FAIL", "NA") if v.lower() in found), None)
        verdict = verdict or (learned if learned in ("PASS", "FAIL", "NA") else None)
        if verdict is None:
            reference = labelled(text, REFERENCE_LABELS)
            response = labelled(text, RESPONSE_LABELS) or ""
            verdict = "PASS" if self.correct(response, reference) else "FAIL"
        body = json.dumps({"reasoning": f"Scripted rule gave {verdict}.", "verdict": verdict})
        return Answer(body, _word_tokens(body))

    def _pairwise(self, text: str) -> Answer:
        """A, B or TIE: the only correct answer wins, else the only non-refusal; else a tie.

        Symmetric, so the unbiased judge agrees with itself under a swap; ``first`` always says A,
        ``length`` prefers the longer answer whatever it says."""
        found = markers(text)
        verdict = next((v for v in ("A", "B", "TIE") if v.lower() in found), None)
        a, b = section(text, "response_a") or "", section(text, "response_b") or ""
        if verdict is None and self.bias == "first":
            verdict = "A"
        elif verdict is None and self.bias == "length":
            size_a, size_b = len(a.split()), len(b.split())
            verdict = "A" if size_a > size_b else "B" if size_b > size_a else "TIE"
        elif verdict is None:
            reference = section(text, "reference")
            good_a, good_b = self.correct(a, reference), self.correct(b, reference)
            verdict = "A" if good_a and not good_b else "B" if good_b and not good_a else "TIE"
        body = json.dumps({"reasoning": f"Scripted rule gave {verdict}.", "verdict": verdict})
        return Answer(body, _word_tokens(body))

    def _correctness(self, text: str) -> Answer:
        reference = labelled(text, REFERENCE_LABELS)
        prediction = labelled(text, RESPONSE_LABELS)
        ok = bool(reference and prediction and contains_reference(prediction, reference))
        verdict = "correct" if ok else "incorrect"
        return Answer(json.dumps({"verdict": verdict, "rationale": "Scripted rule."}))


def _range_of(text: str) -> tuple[int, int] | None:
    match = re.search(r"integer from (-?\d+) to (-?\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _score_answer(text: str, low: int, probs: list[float]) -> Answer:
    top = {str(low + i): math.log(p) for i, p in enumerate(probs) if p > 0}
    digits = re.search(r"-?\d+", text)
    chosen = digits.group(0) if digits else max(top, key=lambda k: top[k])
    prefix = text[: digits.start()] if digits else ""
    tokens = [(t, 0.0, {t: 0.0}) for t in re.findall(r"\w+|[^\w\s]", prefix)]
    tokens.append((" " + chosen if prefix.endswith(" ") else chosen, top.get(chosen, -20.0), top))
    return Answer(text, tokens)


def _word_tokens(text: str) -> list[tuple[str, float, dict[str, float]]]:
    return [(t, 0.0, {t: 0.0}) for t in re.findall(r"\s?\S+", text)[:64]]
