"""Inspect AI: a Python module with an ``@scorer`` (and a task stub so ``inspect list tasks`` sees it).

Built-in comparisons are written out as plain Python inside the scorer. Function graders are embedded
verbatim: MKA1-sample ones are called with the sample/item dicts built from Inspect's state and
target; Adaptive ones with a ``StringThread`` of the conversation (the studio's own stdlib stand-in for
``adaptive_harmony`` travels inside the module, so nothing else needs installing). Binary, range
and rubric judges become custom scorers sending the studio's exact messages (``_inspect_judge``);
letter judges are Inspect's own model-graded scorers; other judges and composites are refused.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from studio.core.kinds import ByKind, GraderKind, get_kind, kind_of
from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    FunctionGrader,
    GraderDefinition,
    JuryGrader,
    LetterJudge,
    RangeJudge,
    RubricJudge,
)
from studio.core.safe_files import read_regular_text
from studio.core.sandbox.launch import GUEST_DIR

from . import _inspect_judge as inspect_judge
from ._adapters import adapter_module, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._carried import carried, with_definitions
from ._fields import docstring, inspect_options, read_text, slug, unexported
from ._judge_prompts import portable, portable_or_reason
from ._jury import INSPECT_REDUCERS, inspect_problem
from ._losses import skip
from ._syntax import parse_python
from .openai import plain_extractor

LABEL = "Inspect AI"
COMPARISONS = {
    "exact_match": "float(fold(output) == fold(reference))",
    "contains": "float(fold(reference) in fold(output))",
    "starts_with": "float(fold(output).startswith(fold(reference)))",
    "regex_match": "float(re.search(reference, output, 0 if CASE_SENSITIVE else re.IGNORECASE) is not None)",
}
CASE_DEFAULT = {"exact_match": True, "starts_with": True, "regex_match": True, "contains": False}


INSPECT_SCORERS = ("includes", "match", "pattern", "exact", "f1", "model_graded_qa", "model_graded_fact",
                   "choice", "answer", "math")
# Inspect's default grading templates for model_graded_qa() and model_graded_fact(), reproduced word
# for word: the imported letter-grade judge must send the prompt Inspect sends.
QA_TEMPLATE = """
You are assessing a submitted answer on a given task based on a criterion. Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}
"""
FACT_TEMPLATE = """
You are comparing a submitted answer to an expert answer on a given question. Here is the data:

[BEGIN DATA]
************
[Question]: {question}
************
[Expert]: {criterion}
************
[Submission]: {answer}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any differences in style, grammar, or punctuation.

Does the submission contain the content in the expert answer?

{instructions}
"""
# Each mapped scorer's parameters in order, with Inspect's defaults.
PARAMETERS: dict[str, dict[str, object]] = {
    "includes": {"ignore_case": True},
    "match": {"location": "end", "ignore_case": True, "numeric": False},
    "pattern": {"pattern": None, "ignore_case": True, "match_all": False},
    "exact": {},
    "f1": {"answer_fn": None, "stop_words": None},
    "model_graded_qa": {"template": None, "instructions": None, "grade_pattern": None, "include_history": False,
                        "partial_credit": False, "model": None, "model_role": "grader", "reducer": "majority"},
}
PARAMETERS["model_graded_fact"] = PARAMETERS["model_graded_qa"]
KEYWORD_ONLY = {"match": {"ignore_case", "numeric"}}
LOCATIONS = {"exact": "exact_match", "begin": "starts_with", "end": "ends_with", "any": "contains"}
# Inspect's string scorers compare the text as it is: no early zeros for empty text
PLAIN = {"empty_submission_zero": False, "empty_reference_zero": False}


def _literal_arguments(name: str, call: ast.Call) -> dict[str, object]:
    """The call's arguments as literal values over Inspect's defaults (nothing is evaluated)."""
    params = PARAMETERS[name]
    values = dict(params)
    positional = [p for p in params if p not in KEYWORD_ONLY.get(name, set())]
    if len(call.args) > len(positional):
        raise PlatformError(f"takes at most {len(positional)} positional arguments")
    pairs = list(zip(positional, call.args, strict=False)) + [(kw.arg, kw.value) for kw in call.keywords]
    for param, node in pairs:
        if param is None or param not in params:
            raise PlatformError(f"argument {param or '**'} is not one of {', '.join(params) or 'no arguments'}")
        try:
            values[param] = ast.literal_eval(node)
        except ValueError:
            raise PlatformError(f"argument {param} is not a literal value (the file is never run)") from None
    return values


def _flag(values: dict[str, object], name: str) -> bool:
    value = values[name]
    if not isinstance(value, bool):
        raise PlatformError(f"{name} must be True or False")
    return value


def _scorer_name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else None
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def _letter_judge(name: str, values: dict[str, object], key: str, folder: Path) -> LetterJudge:
    """model_graded_qa()/model_graded_fact() as a letter-grade judge with Inspect's prompt and grading."""
    template = values["template"]
    if template is None:
        template = FACT_TEMPLATE if name == "model_graded_fact" else QA_TEMPLATE
    if not isinstance(template, str):
        raise PlatformError("template must be a literal string")
    beside = folder / template
    if len(template) < 255 and "\n" not in template and beside.is_file():
        template = read_regular_text(beside)  # Inspect reads a template given as a file path
    for field in ("instructions", "grade_pattern"):
        if values[field] is not None and not isinstance(values[field], str):
            raise PlatformError(f"{field} must be a literal string")
    if values["grade_pattern"] is not None:
        try:
            if re.compile(str(values["grade_pattern"])).groups < 1:
                raise PlatformError("grade_pattern needs a capture group for the grade")
        except re.error as exc:
            raise PlatformError(f"grade_pattern is not a valid regular expression ({exc})") from None
    model = values["model"]
    if model is not None and not isinstance(model, str):
        raise PlatformError("model must be one model name: a panel of graders has no studio form")
    return LetterJudge(key=key, template=template, instructions=values["instructions"] or None,
                       grade_pattern=values["grade_pattern"], partial_credit=_flag(values, "partial_credit"),
                       include_history=_flag(values, "include_history"),
                       model=model.split("/", 1)[-1] if isinstance(model, str) else None)


def _args(pairs: list[tuple[str, object, object]]) -> str:
    """``name=value`` for each argument whose value differs from Inspect's default."""
    return ", ".join(f"{name}={value!r}" for name, value, default in pairs if value != default)


#: the kinds Inspect has scorers of its own for, keyed by kind: the call scoring exactly as the
#: grader (None: this grader's settings have none)
_NATIVE: ByKind[str | None] = ByKind("inspect native scorer")


def native_call(grader: GraderDefinition) -> str | None:
    """The Inspect scorer call that scores exactly as this grader (the ones Inspect import makes), or
    None when the grader is not one of them."""
    call = _NATIVE.of(grader)
    return call(grader) if call is not None else None


@_NATIVE.on(LetterJudge)
def _letter_call(grader: LetterJudge) -> str:
    template = grader.template
    name = "model_graded_fact" if template == FACT_TEMPLATE else "model_graded_qa"
    default_template = FACT_TEMPLATE if name == "model_graded_fact" else QA_TEMPLATE
    return f"{name}(" + _args([
        ("template", template, default_template), ("instructions", grader.instructions, None),
        ("grade_pattern", grader.grade_pattern, None), ("include_history", grader.include_history, False),
        ("partial_credit", grader.partial_credit, False)]) + ")"


@_NATIVE.on(BuiltinGrader)
def _builtin_call(grader: BuiltinGrader) -> str | None:
    o = grader.options
    if o.negate or o.reference is not None or o.reference_field or o.values or o.tolerance or o.regex_dialect != "python" \
            or o.thousands_separators or o.empty_submission_zero:
        return None
    ignore_case = o.case_sensitive is False
    plain = not o.empty_reference_zero and not o.pattern and not o.match_all
    located = {v: k for k, v in LOCATIONS.items()}
    if (grader.function == "contains" and plain and not o.strip and not o.trim_punctuation and not o.numeric_reference
            and not o.normalize and not o.stop_words and (o.case_fold == "casefold" or not ignore_case)):
        return "includes(" + _args([("ignore_case", ignore_case, True)]) + ")"
    if (grader.function in located and plain and o.strip is True and o.trim_punctuation and not o.normalize
            and not o.stop_words and (o.case_fold == "casefold" or not ignore_case)):
        return "match(" + _args([("location", located[grader.function], "end"),
                                 ("ignore_case", ignore_case, True), ("numeric", o.numeric_reference, False)]) + ")"
    if o.trim_punctuation or o.numeric_reference:
        return None
    if grader.function == "regex_extract" and o.pattern and o.empty_reference_zero and not o.strip \
            and not o.normalize and not o.stop_words and (o.case_fold == "lower" or not ignore_case):
        return "pattern(" + _args([("pattern", o.pattern, None), ("ignore_case", ignore_case, True),
                                   ("match_all", o.match_all, False)]) + ")"
    if o.normalize and o.normalization == "inspect" and plain:
        if grader.function == "exact_match" and not o.stop_words:
            return "exact()"
        if grader.function == "token_f1":
            return "f1(" + _args([("stop_words", list(o.stop_words) or None, None)]) + ")"
    return None


# ---- what Inspect does with each kind it carries (keyed by kind: ``kinds.ByKind``) --------------

#: a kind written as a whole task of Inspect's own scorers (a jury's multi_scorer), before any other check
_WHOLE_SUPPORT: ByKind[Support] = ByKind("inspect whole-task support")
_WHOLE_MODULE: ByKind[ExportResult] = ByKind("inspect whole-task module")
#: the kinds written as a custom scorer: whether this definition can be, and its ``_score`` body
_SUPPORT: ByKind[Support] = ByKind("inspect support")
_BODY: ByKind[str] = ByKind("inspect scorer body")
#: a native scorer graded by a judge model the export cannot name (its endpoint and model are dropped)
_NATIVE_JUDGE: ByKind[bool] = ByKind("inspect native judge")


@_WHOLE_SUPPORT.on(JuryGrader)
def _jury_support(grader: JuryGrader) -> Support:
    problem = inspect_problem(grader)
    return Support.no(problem) if problem else Support.yes()


@_WHOLE_MODULE.on(JuryGrader)
def _jury_module(platform: InspectPlatform, grader: JuryGrader, fn: str) -> ExportResult:
    return platform._jury(grader, fn)


@_NATIVE_JUDGE.on(LetterJudge)
def _letter_judged(grader: LetterJudge) -> bool:
    return bool(grader.endpoint or grader.model)


@_SUPPORT.on(BuiltinGrader)
def _builtin_support(grader: BuiltinGrader) -> Support:
    o = grader.options
    if inspect_options(o, "this export"):
        return Support.no("these Inspect text options match no Inspect scorer (match, pattern, exact, f1) "
                          "as set: keep the values Inspect import gives them")
    if grader.function not in COMPARISONS:
        return Support.no(f"the {grader.function} comparison is not written for Inspect yet")
    if o.reference_field:
        return Support.no("Inspect's target is the sample's answer, not a dataset row field; "
                          "OpenAI graders can read it")
    if o.regex_dialect != "python":
        return Support.no("the JavaScript regex dialect is not written for Inspect; promptfoo reads it")
    if o.normalize or o.values or o.tolerance:
        return Support.no("normalised text, value lists and tolerances are not written for Inspect yet")
    return Support.yes()


@_SUPPORT.on(FunctionGrader)
def _function_support(grader: FunctionGrader) -> Support:
    problem = refusal(grader, LABEL)  # Letta and promptfoo contracts travel in an adapter
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(BinaryJudge, RangeJudge, RubricJudge)
def _judge_support(grader: BinaryJudge | RangeJudge | RubricJudge) -> Support:
    exact = portable_or_reason(grader)  # a custom @scorer sending the studio's messages
    return Support.no(exact) if isinstance(exact, str) else Support.yes()


@_BODY.on(BuiltinGrader)
def _builtin_body(platform: InspectPlatform, grader: BuiltinGrader, warnings: list[str], notes: list[str]) -> str:
    warnings += unexported(grader, {"function", "options", "extractor", "name"}, LABEL)
    return platform._builtin(grader)


#: what a judge kind scores differently in Inspect
_JUDGE_NOTES = {kind_of(BinaryJudge): ("an NA verdict scores 0 in Inspect's mean (the studio leaves the sample "
                                       "out); the score's metadata says skipped")}


@_BODY.on(BinaryJudge, RangeJudge, RubricJudge)
def _judge_body(platform: InspectPlatform, grader: BinaryJudge | RangeJudge | RubricJudge, warnings: list[str],
                notes: list[str]) -> str:
    body = inspect_judge.body(portable(grader))  # the whole definition travels
    if note := _JUDGE_NOTES.get(grader.kind):
        warnings.append(f"{grader.key}: approximated: {note}")
    notes.append(f"{grader.key}: the prompt reads the conversation, reference and input the studio "
                 "writes in each sample's metadata (export with --dataset); without them it rebuilds "
                 "them from Inspect's messages and target, which can differ")
    return body


@_BODY.on(FunctionGrader)
def _function_body(platform: InspectPlatform, grader: FunctionGrader, warnings: list[str], notes: list[str]) -> str:
    if grader.contract == "adaptive":
        body = platform._adaptive(grader)
    elif grader.contract == "mka1_sample":
        body = platform._function(grader)
    else:
        body = platform._adapted(grader)
        warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated adapter "
                        "(the sample's metadata is its row)")
    warnings += unexported(grader, {"source", "contract", "name", "extractor"}, LABEL)
    return body


class InspectPlatform(Platform):
    name = "inspect"
    label = LABEL
    imports = True

    def detect(self, path: Path) -> bool:
        if path.suffix != ".py":
            return False
        try:
            text = read_regular_text(path)
        except (OSError, UnicodeDecodeError):
            return False
        return "inspect_ai" in text

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        """The task file's scorers, read from its syntax tree (the file is never executed); a module the
        studio exported, unchanged since, gives back the definition it carries (``_carried``)."""
        text = read_text(path)
        definitions, why = carried(text, self.name)
        if definitions:
            return ImportResult(graders=definitions)
        tree = parse_python(text, path)
        result = ImportResult()
        seen: set[str] = set()
        custom = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            _scorer_name(d) == "scorer" or (isinstance(d, ast.Name) and d.id == "scorer") for d in n.decorator_list)}
        scorer_args = _scorer_arguments(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _scorer_name(d) == "scorer" or (isinstance(d, ast.Name) and d.id == "scorer")
                    for d in node.decorator_list):
                line = min([node.lineno] + [d.lineno for d in node.decorator_list])
                skip(result, f"@scorer {node.name}", "custom scorer", PlatformError(
                    "custom Python run on Inspect's TaskState; rewrite it as a function grader (the studio "
                    "never runs a task file to import it)"), line)
                custom.add(node.name)
                continue
            name = _scorer_name(node) if isinstance(node, ast.Call) else None
            if name not in INSPECT_SCORERS:
                if isinstance(node, ast.Call) and name not in custom and id(node) in scorer_args:
                    skip(result, f"{name or 'scorer'}()", name, PlatformError(
                        "this scorer has no studio grader (only match, includes, pattern, exact, f1 and the "
                        "model_graded scorers are read)"), node.lineno)
                continue
            assert isinstance(node, ast.Call)
            try:
                grader = self._from_call(name, node, key if key and not seen else slug(f"{path.stem}-{name}"),
                                         path.parent)
            except PlatformError as exc:
                skip(result, f"{name}()", name, exc, node.lineno)
                continue
            if grader.key in seen:
                grader = grader.model_copy(update={"key": slug(f"{grader.key}-{node.lineno}")})
            seen.add(grader.key)
            result.graders.append(grader)
        if why:  # its studio definition is not used: say why the file was read as Inspect code
            result.warnings.append(f"{path.name}: read as Inspect code, not as the grader it was exported from: {why}")
        if not result.graders:
            detail = "; ".join(result.report()) or "no Inspect scorer found"
            raise PlatformError(f"{path.name}: no scorer imported ({detail})")
        return result

    @staticmethod
    def _from_call(name: str, call: ast.Call, key: str, folder: Path) -> BuiltinGrader | LetterJudge:
        if name not in PARAMETERS:
            raise PlatformError(f"{name}() has no studio grader kind")
        values = _literal_arguments(name, call)
        if name.startswith("model_graded_"):
            return _letter_judge(name, values, key, folder)
        if name == "includes":
            # target in output, casefolded when ignoring case, no stripping; an empty target is
            # contained in anything
            return BuiltinGrader(key=key, function="contains", options={
                "case_sensitive": not _flag(values, "ignore_case"), "case_fold": "casefold", "strip": False,
                **PLAIN})
        if name == "match":
            location = values["location"]
            if location not in LOCATIONS:
                raise PlatformError(f"location must be one of {', '.join(LOCATIONS)}, not {location!r}")
            return BuiltinGrader(key=key, function=LOCATIONS[str(location)], options={
                "case_sensitive": not _flag(values, "ignore_case"), "case_fold": "casefold", "strip": True,
                "trim_punctuation": True, "numeric_reference": _flag(values, "numeric"), **PLAIN})
        if name == "pattern":
            regex = values["pattern"]
            if not isinstance(regex, str):
                raise PlatformError("pattern must be a literal string")
            try:
                re.compile(regex)
            except re.error as exc:
                raise PlatformError(f"pattern {regex!r} is not a valid regular expression ({exc})") from None
            # an empty target never counts: Inspect needs a non-empty matched answer
            return BuiltinGrader(key=key, function="regex_extract", options={
                "pattern": regex, "case_sensitive": not _flag(values, "ignore_case"), "case_fold": "lower",
                "match_all": _flag(values, "match_all"), "empty_submission_zero": False,
                "empty_reference_zero": True})
        if name == "exact":
            return BuiltinGrader(key=key, function="exact_match", options={
                "normalize": True, "normalization": "inspect", **PLAIN})
        if values["answer_fn"] is not None:
            raise PlatformError("answer_fn is Python run on the output; only f1() without it maps")
        stop = values["stop_words"]
        if stop is not None and not (isinstance(stop, (list, tuple)) and all(isinstance(w, str) for w in stop)):
            raise PlatformError("stop_words must be a literal list of strings")
        return BuiltinGrader(key=key, function="token_f1", options={
            "normalize": True, "normalization": "inspect", "stop_words": list(stop or []), **PLAIN})

    def _can_export(self, grader: GraderDefinition) -> Support:
        if (whole := _WHOLE_SUPPORT.of(grader)) is not None:  # a jury: a multi_scorer of Inspect's own
            return whole(grader)
        if not plain_extractor(grader):
            return Support.no("Inspect scorers read the model output; the studio extractor is not exported")
        if native_call(grader) is not None:
            return Support.yes()
        check = _SUPPORT.of(grader)
        return check(grader) if check is not None else Support.no(self.no_form(get_kind(grader.kind)))

    def no_form(self, kind: GraderKind) -> str:
        return (f"a {kind.kind.replace('_', ' ')} is not exported: Inspect's model-graded scorers use their "
                "own prompts and would score differently, and its calls are not written as a custom scorer yet")

    def _export(self, grader: GraderDefinition) -> ExportResult:
        """The scorer module, ending with the definition it came from (``_carried``: import gives it back)."""
        result = self._module(grader)
        name = f"{grader.key.replace('-', '_').replace('.', '_')}_inspect.py"
        if name in result.files:
            result.files[name] = with_definitions(self.name, result.files[name], [grader])
        return result

    def _module(self, grader: GraderDefinition) -> ExportResult:
        warnings: list[str] = []
        notes: list[str] = []
        fn = grader.key.replace("-", "_").replace(".", "_")
        if (whole := _WHOLE_MODULE.of(grader)) is not None:
            return whole(self, grader, fn)
        call = native_call(grader)
        if call is not None:
            return self._native(grader, fn, call)
        write = _BODY.of(grader)
        if write is None:  # pragma: no cover - can_export refuses the rest
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        body = write(self, grader, warnings, notes)
        module = (
            f"{docstring(f'{grader.name or grader.key}: Inspect AI scorer exported by Grader Studio (grader {grader.key!r}).')}\n\n"
            "from __future__ import annotations\n\n"
            "import re  # noqa: F401\n\n"
            "import sys  # noqa: F401\n"
            "import types  # noqa: F401\n\n"
            "from inspect_ai import Task, task\n"
            "from inspect_ai.scorer import Score, Target, mean, scorer\n"
            "from inspect_ai.solver import TaskState\n\n"
            f"{body}\n\n"
            "@scorer(metrics=[mean()])\n"
            f"def {fn}():\n"
            "    async def score(state: TaskState, target: Target) -> Score:\n"
            "        output = state.output.completion\n"
            "        value = await _score(state, output, target.text)\n"
            "        if isinstance(value, Score):\n"
            "            return value\n"
            f"        return Score(value=value, answer=output, metadata={{'grader': {grader.key!r}}})\n\n"
            "    return score\n\n\n"
            "@task\n"
            f"def {fn}_task() -> Task:\n"
            '    """Add a dataset and a solver; the scorer is the exported grader."""\n'
            f"    return Task(dataset=[], scorer={fn}())\n"
        )
        return ExportResult(files={f"{fn}_inspect.py": module}, warnings=warnings, notes=notes)

    def _jury(self, jury: JuryGrader, fn: str) -> ExportResult:
        """A task whose scorer is ``multi_scorer`` over the jurors' own Inspect scorers."""
        calls = [native_call(j.grader) for j in jury.jurors]
        names = sorted({c.split("(", 1)[0] for c in calls if c})
        reducer = INSPECT_REDUCERS[jury.aggregation]
        warnings = [f"{jury.key}: the jurors' endpoints and models are not written: Inspect grades each with the "
                    "model bound to the 'grader' role, else the evaluated model; pass model= to each scorer "
                    "to give every juror its own"]
        if jury.aggregation == "majority":
            warnings.append(f"{jury.key}: Inspect's mode reducer breaks an even split by the grade it met first, "
                            "where the studio scores a tie 0.5")
        if jury.quorum is not None:
            warnings.append(f"{jury.key}: quorum {jury.quorum} is not written: multi_scorer reduces whatever answered")
        jurors = "\n        ".join(f"{c},  # {name}" for c, name in zip(calls, jury.juror_names(), strict=True))
        module = (
            f"{docstring(f'{jury.name or jury.key}: Inspect AI jury exported by Grader Studio (grader {jury.key!r}).')}\n\n"
            "from __future__ import annotations\n\n"
            "from inspect_ai import Task, task\n"
            f"from inspect_ai.scorer import Scorer, multi_scorer, {', '.join(names)}\n\n\n"
            f"def {fn}() -> Scorer:\n"
            f'    """The jurors run concurrently; the {reducer} reducer aggregates their grades."""\n'
            f"    return multi_scorer([\n        {jurors}\n    ], {reducer!r})\n\n\n"
            "@task\n"
            f"def {fn}_task() -> Task:\n"
            '    """Add a dataset and a solver; the scorer is the exported jury."""\n'
            f"    return Task(dataset=[], scorer={fn}())\n"
        )
        return ExportResult(files={f"{fn}_inspect.py": module}, warnings=warnings)

    @staticmethod
    def _native(grader: GraderDefinition, fn: str, call: str) -> ExportResult:
        """A task module whose scorer is Inspect's own built-in scorer, with the grader's arguments."""
        warnings = unexported(grader, {"function", "options", "extractor", "name", "template", "instructions",
                                       "grade_pattern", "include_history", "partial_credit", "endpoint", "model",
                                       "temperature", "max_tokens"}, LABEL)
        if (judged := _NATIVE_JUDGE.of(grader)) is not None and judged(grader):
            warnings.append(f"{grader.key}: the judge's endpoint and model are not written: Inspect grades with "
                            "the model bound to the 'grader' role (eval --model-role grader=...), else the "
                            "evaluated model")
        name = call.split("(", 1)[0]
        module = (
            f"{docstring(f'{grader.name or grader.key}: Inspect AI scorer exported by Grader Studio (grader {grader.key!r}).')}\n\n"
            "from __future__ import annotations\n\n"
            "from inspect_ai import Task, task\n"
            f"from inspect_ai.scorer import Scorer, {name}\n\n\n"
            f"def {fn}() -> Scorer:\n"
            '    """Inspect\'s own scorer, with the arguments the studio grader scores as."""\n'
            f"    return {call}\n\n\n"
            "@task\n"
            f"def {fn}_task() -> Task:\n"
            '    """Add a dataset and a solver; the scorer is the exported grader."""\n'
            f"    return Task(dataset=[], scorer={fn}())\n"
        )
        return ExportResult(files={f"{fn}_inspect.py": module}, warnings=warnings)

    @staticmethod
    def _builtin(grader: BuiltinGrader) -> str:
        o = grader.options
        case = CASE_DEFAULT[grader.function] if o.case_sensitive is None else o.case_sensitive
        reference = repr(o.reference) if o.reference is not None else "target"
        value = COMPARISONS[grader.function]
        if o.negate:
            value = f"1.0 - {value}"
        empty = ["not output"] if o.empty_submission_zero else []  # the studio's (Letta's) early zeros
        if o.empty_reference_zero:
            empty.append("not reference")
        guard = f"    if {' or '.join(empty)}:\n        return 0.0\n" if empty else ""
        if o.empty_reference_error:  # promptfoo's invariant: an empty value is an error, as in the studio
            guard = ("    if not reference:\n        raise ValueError('an empty value to compare with is an error "
                     "(promptfoo fails the assertion)')\n") + guard
        return (
            f"STRIP = {grader.strips!r}\nCASE_SENSITIVE = {case!r}\n\n\n"
            "def fold(text: str) -> str:\n"
            "    text = text.strip() if STRIP else text\n"
            f"    return text if CASE_SENSITIVE else text.{'casefold' if o.case_fold == 'casefold' else 'lower'}()\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    output = output or ''  # no output reads as empty text, as the studio reads it\n"
            f"    reference = {reference}\n"
            f"{guard}"
            f"    return {value}\n"
        )

    @staticmethod
    def _function(grader: FunctionGrader) -> str:
        return (
            f"METRIC = {grader.metric.key!r}\n\n"
            "# --- the grader's own source, unchanged (MKA1 sample contract) ---\n"
            f"{grader.source.rstrip()}\n"
            "# --- end of the grader's source ---\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    question = state.input_text\n"
            '    sample = {"output_text": output, "extracted_output": output, "prompt": question}\n'
            '    item = {"input": question, "target": target, "reference_answer": target}\n'
            "    result = grade(sample, item)  # noqa: F821 - defined by the source above\n"
            "    if isinstance(result, dict):\n"
            '        scores = result.get("scores") or {}\n'
            "        return float(scores.get(METRIC, next(iter(scores.values()), 0.0)))\n"
            "    return float(result)\n"
        )

    @staticmethod
    def _adapted(grader: FunctionGrader) -> str:
        return (
            "# Grader Studio's stdlib adapter around the grader's unchanged source (a string literal)\n"
            f"_ADAPTER_SOURCE = {adapter_module(grader, 'mka1')!r}\n"
            "_ADAPTER = types.ModuleType('studio_adapter')\n"
            "exec(compile(_ADAPTER_SOURCE, 'studio_adapter.py', 'exec'), _ADAPTER.__dict__)\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    return await _ADAPTER.ascore(output, target, state.input_text, dict(state.metadata or {}))\n"
        )

    @staticmethod
    def _adaptive(grader: FunctionGrader) -> str:
        shim = (GUEST_DIR / "shims" / "adaptive_harmony.py").read_text(encoding="utf-8")
        return (
            "# Grader Studio's stdlib stand-in for adaptive_harmony.StringThread, for the source below\n"
            f"_SHIM = {shim!r}\n"
            "if 'adaptive_harmony' not in sys.modules:\n"
            "    _module = types.ModuleType('adaptive_harmony')\n"
            "    exec(compile(_SHIM, 'adaptive_harmony.py', 'exec'), _module.__dict__)\n"
            "    sys.modules['adaptive_harmony'] = _module\n\n"
            "# --- the grader's own source, unchanged (Adaptive contract) ---\n"
            f"{grader.source.rstrip()}\n"
            "# --- end of the grader's source ---\n\n\n"
            "async def _score(state: TaskState, output: str, target: str) -> float:\n"
            "    from adaptive_harmony import StringThread\n\n"
            "    turns = [(m.role, m.text) for m in state.messages if m.role != 'assistant']\n"
            "    metadata = {**(state.metadata or {}), 'expected': target}\n"
            "    result = grade(StringThread(turns + [('assistant', output)], metadata))  # noqa: F821\n"
            "    if hasattr(result, '__await__'):\n"
            "        result = await result\n"
            "    return float(result)\n"
        )


def _scorer_arguments(tree: ast.AST) -> set[int]:
    """ids of the calls given as a ``scorer=`` argument (alone or in a list): the task's scorers."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "scorer":
                    values = kw.value.elts if isinstance(kw.value, ast.List | ast.Tuple) else [kw.value]
                    found |= {id(v) for v in values if isinstance(v, ast.Call)}
    return found


PLATFORM = InspectPlatform()
