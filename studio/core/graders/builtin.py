"""The built-in comparisons (Letta tool graders, HUD answer comparisons), scored in-process.

They are pure functions of the sample's text, so they need no sandbox: a run of them is bounded by
SQLite, not by grading.
"""

from __future__ import annotations

import json
import operator
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from studio.core import saferegex
from studio.core.graders.inspect_text import (
    numeric_location,
    squad_exact,
    squad_f1,
    squad_normalize,
    strip_number_marks,
    trim_punctuation,
)
from studio.core.graders.text import ascii_printable, first_number, normalize, token_f1
from studio.core.json_types import JsonObject
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import BuiltinGrader, BuiltinOptions, Outcome, Sample
from studio.core.models.extractors import ExtractionError, extract
from studio.core.scoring import SAMPLES, GradingContext, ScorerBase, TextRow

from .jsregex import translate as translate_js


class NoReference(ValueError):
    pass


def row_item(sample: Sample) -> JsonObject:
    """The dataset row as OpenAI's ``item`` (an OpenAI-shaped row's own ``item``, else the row)."""
    item = sample.fields.get("item")
    return item if isinstance(item, dict) else sample.fields


def _reference(options: BuiltinOptions, sample: Sample) -> str | None:
    if options.reference is not None:
        return options.reference
    if options.reference_field is not None:
        value = row_item(sample).get(options.reference_field)
        return value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return sample.expected


def _required_reference(options: BuiltinOptions, sample: Sample) -> str:
    ref = _reference(options, sample)
    if ref is None and not options.empty_reference_zero:
        # empty text compared like any other (HUD, OpenAI, promptfoo): a missing reference is empty
        # text too, as promptfoo renders a missing {{expected}} and Inspect reads a missing target
        return ""
    if ref is None:
        raise NoReference("no ground truth: the sample has no expected answer and the grader sets no reference")
    return ref


def _folder(options: BuiltinOptions, case_default: bool, strip: bool) -> Callable[[str], str] | None:
    """How a text is folded before comparing (None: left as it is): the one rule, applied a sample
    at a time (``_fold``) or to a whole batch (``TextCheck``)."""
    if options.normalize:
        if options.normalization == "inspect":
            stop_words = options.stop_words
            return lambda text: squad_normalize(text, stop_words)
        return normalize
    case_sensitive = case_default if options.case_sensitive is None else options.case_sensitive
    case = None if case_sensitive else (str.casefold if options.case_fold == "casefold" else str.lower)
    if strip and case is not None:
        return lambda text: case(text.strip())
    return str.strip if strip else case


def _fold(text: str, options: BuiltinOptions, case_default: bool, strip: bool) -> str:
    fold = _folder(options, case_default, strip)
    return text if fold is None else fold(text)


#: a location's comparison of the folded submission (first) with the folded reference
_COMPARE: dict[str, Callable[[str, str], bool]] = {
    "exact": operator.eq, "begin": str.startswith, "end": str.endswith, "any": operator.contains,
}


def _located_args(function: str, o: BuiltinOptions) -> tuple[str, bool, bool] | None:
    """(location, case-sensitive by default, strip) of the functions that compare at a location."""
    if function == "exact_match":
        return "exact", True, True if o.strip is None else o.strip
    if function == "contains":
        return "any", False, bool(o.strip)
    if function == "starts_with":
        return "begin", True, bool(o.strip)
    if function == "ends_with":
        return "end", True, bool(o.strip)
    return None


def _located(sub: str, o: BuiltinOptions, s: Sample, location: str, case_default: bool, strip: bool) -> float:
    """Compare at a location (exact, begin, end, any) after folding, with Inspect's match() options:
    a numeric reference compares numbers (``numeric_reference``), ends lose punctuation
    (``trim_punctuation``)."""
    got = _fold(sub, o, case_default, strip)
    want = _fold(_required_reference(o, s), o, case_default, strip)
    if o.numeric_reference and not o.normalize:
        numbers = numeric_location(got, want, location)
        if numbers is not None:
            return float(numbers)
        want = strip_number_marks(want)
    if o.trim_punctuation and not o.normalize:
        got, want = trim_punctuation(got), trim_punctuation(want)
    return float(_COMPARE[location](got, want))


def _at(function: str, sub: str, o: BuiltinOptions, s: Sample) -> float:
    args = _located_args(function, o)
    assert args is not None
    return _located(sub, o, s, *args)


def exact_match(sub: str, o: BuiltinOptions, s: Sample) -> float:
    if o.normalize and o.normalization == "inspect":
        return squad_exact(sub, _required_reference(o, s), o.stop_words)
    return _at("exact_match", sub, o, s)


def contains(sub: str, o: BuiltinOptions, s: Sample) -> float:
    return _at("contains", sub, o, s)


def _values(o: BuiltinOptions, s: Sample) -> list[str]:
    if o.values:
        return o.values
    return [_required_reference(o, s)]


def contains_any(sub: str, o: BuiltinOptions, s: Sample) -> float:
    values = _values(o, s)
    strip = bool(o.strip)
    return float(any(_fold(v, o, False, strip) in _fold(sub, o, False, strip) for v in values)) if values else 0.0


def contains_all(sub: str, o: BuiltinOptions, s: Sample) -> float:
    strip = bool(o.strip)
    return float(all(_fold(v, o, False, strip) in _fold(sub, o, False, strip) for v in _values(o, s)))


class InvalidPattern(ValueError):
    """A regex that does not compile: 0.0 whether negated or not (Letta and promptfoo both fail it)."""


def regex_match(sub: str, o: BuiltinOptions, s: Sample) -> float:
    """The pattern (the grader's or the sample's) never runs unbounded: studio.core.saferegex."""
    flags = 0 if o.case_sensitive in (None, True) else re.IGNORECASE
    try:
        if o.regex_dialect == "javascript":
            found = saferegex.matches(translate_js(_required_reference(o, s)), sub, flags | re.ASCII)
        else:
            found = saferegex.matches(_required_reference(o, s), sub, flags)
    except re.error as exc:
        raise InvalidPattern(f"invalid regular expression: {exc}") from None
    return float(found)


def regex_extract(sub: str, o: BuiltinOptions, s: Sample) -> float:
    """Inspect's pattern(): the groups ``options.pattern`` captures (the whole match without groups)
    compared with the reference, one of them (or all with ``match_all``) equal after folding case."""
    if not o.pattern:
        raise InvalidPattern("regex_extract needs a pattern")
    sensitive = o.case_sensitive in (None, True)
    try:
        found = saferegex.search(o.pattern, sub, 0 if sensitive else re.IGNORECASE)
    except re.error as exc:
        raise InvalidPattern(f"invalid regular expression: {exc}") from None
    if found is None:
        return 0.0
    want = _fold(_required_reference(o, s), o, True, bool(o.strip))
    groups = [g for g in (found.groups() or (found.group(0),)) if isinstance(g, str)]
    equal = [_fold(g, o, True, bool(o.strip)) == want for g in groups]
    return float(bool(equal) and (all(equal) if o.match_all else any(equal)))


def ascii_printable_only(sub: str, o: BuiltinOptions, s: Sample) -> float:
    return float(ascii_printable(sub))


def numeric_match(sub: str, o: BuiltinOptions, s: Sample) -> float:
    got = first_number(sub, o.thousands_separators)
    want = first_number(_required_reference(o, s), o.thousands_separators)
    if got is None or want is None:
        return 0.0
    return float(abs(got - want) <= o.tolerance)


def token_f1_score(sub: str, o: BuiltinOptions, s: Sample) -> float:
    if o.normalization == "inspect":
        return squad_f1(sub, _required_reference(o, s), o.stop_words)
    return token_f1(sub, _required_reference(o, s))


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def is_json(sub: str, o: BuiltinOptions, s: Sample) -> float:
    """Valid JSON as RFC 8259 (and JavaScript's JSON.parse) reads it: NaN and Infinity are not."""
    try:
        json.loads(sub, parse_constant=_no_constant)
    except (ValueError, TypeError):
        return 0.0
    return 1.0


def starts_with(sub: str, o: BuiltinOptions, s: Sample) -> float:
    return _at("starts_with", sub, o, s)


def ends_with(sub: str, o: BuiltinOptions, s: Sample) -> float:
    return _at("ends_with", sub, o, s)


FUNCTIONS: dict[str, Callable[[str, BuiltinOptions, Sample], float]] = {
    "exact_match": exact_match,
    "contains": contains,
    "contains_any": contains_any,
    "contains_all": contains_all,
    "regex_match": regex_match,
    "ascii_printable_only": ascii_printable_only,
    "numeric_match": numeric_match,
    "token_f1": token_f1_score,
    "is_json": is_json,
    "starts_with": starts_with,
    "ends_with": ends_with,
    "regex_extract": regex_extract,
}


USES_REFERENCE = {"exact_match", "contains", "regex_match", "numeric_match", "token_f1", "starts_with", "ends_with",
                  "regex_extract"}


def _empty(grader: BuiltinGrader, submission: str, sample: Sample) -> str | None:
    """Letta's early zeros (``empty_submission_zero``, ``empty_reference_zero``): why this sample
    scores 0.0 before comparing, or None."""
    o = grader.options
    if o.empty_submission_zero and not submission:
        return "empty submission: the extractor found no content"
    reads_reference = grader.function in USES_REFERENCE or (
        grader.function in ("contains_any", "contains_all") and not o.values)
    if o.empty_reference_zero and reads_reference and _reference(o, sample) == "":
        return "empty ground truth"
    return None


def _evaluate(grader: BuiltinGrader, sample: Sample) -> tuple[float, str] | Outcome:
    """(score, submission), or the Outcome of a sample that did not compare (early zero, error)."""
    try:
        submission = extract(sample, grader.extractor)
        if grader.options.empty_reference_error and grader.function in USES_REFERENCE \
                and not _reference(grader.options, sample):
            return Outcome.failure(f"{grader.function} has an empty value to compare with (promptfoo fails such "
                                   "an assertion with an error, not a score)")
        empty = _empty(grader, submission, sample)
        if empty is not None:
            return Outcome(score=0.0, scores={grader.metric.key: 0.0}, rationale=empty)
        value = FUNCTIONS[grader.function](submission, grader.options, sample)
    except InvalidPattern as exc:
        return Outcome(score=0.0, scores={grader.metric.key: 0.0}, rationale=str(exc))
    except NoReference as exc:
        # Letta's rule: a tool grader without ground truth scores 0.0
        return Outcome(score=0.0, scores={grader.metric.key: 0.0}, rationale=str(exc))
    except (ExtractionError, saferegex.RegexFailure) as exc:
        return Outcome.failure(str(exc))
    if grader.options.negate:
        value = 1.0 - value
    return value, submission


def score_sample(grader: BuiltinGrader, sample: Sample) -> Outcome:
    start = time.perf_counter()
    result = _evaluate(grader, sample)
    duration_ms = (time.perf_counter() - start) * 1000
    if isinstance(result, Outcome):
        result.duration_ms = duration_ms
        return result
    value, submission = result
    return Outcome.scored(value, {grader.metric.key: value}, duration_ms=duration_ms,
                          details={"submission": submission[:2000]} if grader.extractor else None)


def score_value(grader: BuiltinGrader, sample: Sample) -> float | Outcome:
    """A plain score as a float (nothing but the score to say: no Outcome built), else the Outcome
    ``score_sample`` gives: the suite's lane, where five checks a sample must cost little more than one."""
    if grader.extractor:
        return score_sample(grader, sample)
    result = _evaluate(grader, sample)
    return result if isinstance(result, Outcome) else float(result[0])


#: a check over a batch's columns: submissions, and each sample's expected answer (None: none)
TextCheck = Callable[[Sequence[str], Sequence[str | None]], list[float | Outcome]]


def text_check(grader: BuiltinGrader) -> TextCheck | None:
    """The grader's check over whole columns of (completion, expected), when it reads nothing else
    of a sample (no extractor, no reference field) and compares at a location or checks the text
    alone: each text folded and compared by the rules above (``_folder``, ``_COMPARE``), a batch at a
    time in C-level maps instead of a sample at a time. The samples a Letta or promptfoo rule scores
    before comparing (an empty submission or reference) are scored the usual way (``score_value``),
    so the outcome is the same either way (tests/core/graders/test_builtin_text_lane.py). None: no
    such check (``score_values`` then)."""
    o = grader.options
    if grader.extractor is not None or o.reference_field is not None:
        return None
    fold: Callable[[str], str] | None = None
    compare: Callable[[str, str], bool] | None = None
    if grader.function != "ascii_printable_only":
        args = _located_args(grader.function, o)
        if args is None or o.numeric_reference or o.trim_punctuation or (
                grader.function == "exact_match" and o.normalize and o.normalization == "inspect"):
            return None
        fold, compare = _folder(o, args[1], args[2]), _COMPARE[args[0]]
    reads = compare is not None
    zero_empty = o.empty_submission_zero
    reference_rule = reads and (o.empty_reference_zero or o.empty_reference_error)
    constant = o.reference
    negate = o.negate

    def one(submission: str, expected: str | None) -> float | Outcome:
        return score_value(grader, Sample.model_construct(id="", completion=submission, expected=expected))

    def check(subs: Sequence[str], refs: Sequence[str | None]) -> list[float | Outcome]:
        wants = [constant] * len(subs) if constant is not None else refs
        if (zero_empty and "" in subs) or (reference_rule and (None in wants or "" in wants)):
            return [one(sub, ref) for sub, ref in zip(subs, refs, strict=True)]
        if compare is None:
            hits: Iterator[bool] = map(ascii_printable, subs)
        else:
            # no reference is empty text (``_required_reference``)
            texts = cast(Sequence[str], ["" if w is None else w for w in wants] if None in wants else wants)
            hits = map(compare, subs, texts) if fold is None else map(compare, map(fold, subs), map(fold, texts))
        return [0.0 if hit else 1.0 for hit in hits] if negate else [1.0 if hit else 0.0 for hit in hits]

    return check


_COMPLETION, _EXPECTED = operator.itemgetter(2), operator.itemgetter(3)  # of a text row (store/run_inputs.py)


class BuiltinScorer(ScorerBase):
    batch_size = 1000
    parallel_batches = 1

    def __init__(self, grader: BuiltinGrader) -> None:
        self.grader = grader
        self._check = text_check(grader)
        #: the engine hands it (idx, sample id, completion, expected, JSON) rows (``score_texts``):
        #: no sample's JSON parsed unless it has no completion (store/run_inputs.py)
        self.lanes = SAMPLES | {"values", "texts"} if self._check is not None else SAMPLES | {"values"}

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return [score_sample(self.grader, s) for s in samples]

    async def score_values(self, samples: Sequence[Sample]) -> list[float | Outcome]:
        """``score_batch`` where a plain score is a float (see ``score_value``)."""
        return [score_value(self.grader, s) for s in samples]

    async def score_texts(self, rows: Sequence[TextRow]) -> list[float | Outcome]:
        """``score_values`` over (idx, sample id, completion, expected, JSON or None) rows
        (the ``texts`` lane); a sample without a completion is parsed from its JSON and scored whole."""
        check = self._check
        assert check is not None
        subs = list(map(_COMPLETION, rows))
        if None not in subs:
            return check(subs, list(map(_EXPECTED, rows)))
        keep = [k for k, sub in enumerate(subs) if sub is not None]
        out: list[float | Outcome] = [
            # a row without a completion carries its sample's JSON (the engine's texts lane)
            0.0 if row[2] is not None else score_value(self.grader, Sample.model_validate_json(cast(str, row[4])))

            for row in rows]
        for k, value in zip(keep, check([subs[k] for k in keep], [rows[k][3] for k in keep]), strict=True):
            out[k] = value
        return out


def make_scorer(grader: BuiltinGrader, ctx: GradingContext) -> BuiltinScorer:
    return BuiltinScorer(grader)


KIND = Kind(kind="builtin", cluster=True, model=BuiltinGrader, family="rule", rank=20, icon=("mdi6.function-variant", "#2f8a5b"),
    platforms={name: NATIVE for name in ("hud", "inspect", "letta", "openai", "promptfoo")} | {
        "adaptive": refused("Adaptive has no built-in comparisons; convert the grader to a function grader")}, label="Built-in", scorer=f"{__name__}:make_scorer", editor="form",
            lanes=frozenset({"samples", "values", "texts"}),
            starter={"function": "exact_match", "options": {"normalize": True}})
