"""OpenAI graders JSON: string_check, score_model, label_model, python and multi.

Built-in exact/contains comparisons become ``string_check``; rubric judges (0..1 score) become
``score_model``; binary judges become a PASS/FAIL ``label_model``; MKA1-style ``grade(sample, item)``
functions become ``python``; composites become ``multi`` with a ``calculate_output`` formula. The
grader's key is the OpenAI ``name``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.kinds import ByKind, GraderKind, get_kind
from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    Component,
    CompositeGrader,
    FunctionGrader,
    GraderDefinition,
    RangeJudge,
    RubricJudge,
)
from studio.core.models.openai_grader import OpenAIGrader

from . import _openai_judge as openai_judge
from . import openai_evals
from ._adapters import adapter_module, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._fields import dump_json, peek_json, slug, unexported
from ._judge_prompts import portable, portable_or_reason
from ._templating import from_jinja
from .letta import builtin_mismatch

LABEL = "OpenAI graders"
OUTPUT = "{{ sample.output_text }}"
EXPECTED = "{{ item.reference }}"
PROMPT_FIELDS = {"submission": "sample.output_text", "input": "item.input", "ground_truth": "item.reference"}
TYPES = ("string_check", "text_similarity", "score_model", "label_model", "python", "multi")
SEMANTICS: dict[str, JsonObject] = {
    "exact_match": {"case_sensitive": (None, True), "strip": (None, True, False), "empty_submission_zero": (True, False), "empty_reference_zero": (True, False), "negate": (False, True),
                    "reference": None, "reference_field": None},
    "contains": {"case_sensitive": (None, True, False), "strip": (None, True, False), "empty_submission_zero": (True, False), "empty_reference_zero": (True, False), "reference": None,
                 "reference_field": None},
}
BINARY_PREAMBLE = (
    "You grade one completion against a criterion. Answer PASS when the completion satisfies it, "
    "FAIL otherwise.\n\nCriterion:\n"
)


def plain_extractor(grader: GraderDefinition) -> bool:
    """Template platforms grade the final output text: only the default extractor fits."""
    ex = grader.extractor
    return ex is None or (ex.kind == "last_assistant" and not ex.config)


def formula_name(key: str) -> str:
    return re.sub(r"\W", "_", key)


# ---- what OpenAI's graders do with each kind they carry (keyed by kind: ``kinds.ByKind``) -------

_SUPPORT: ByKind[Support] = ByKind("openai support")
#: each kind's grader JSON and the definition fields it carries (None: the whole definition travels)
_JSON: ByKind[tuple[JsonObject, set[str] | None]] = ByKind("openai grader json")
_NOTES: ByKind[list[str]] = ByKind("openai export notes")


@_SUPPORT.on(BuiltinGrader)
def _builtin_support(platform: OpenAIPlatform, grader: BuiltinGrader) -> Support:
    problem = builtin_mismatch(grader, SEMANTICS, LABEL)
    if problem is None and grader.function == "contains" and grader.options.negate:
        problem = "string_check has no negated contains"
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(FunctionGrader)
def _function_support(platform: OpenAIPlatform, grader: FunctionGrader) -> Support:
    problem = refusal(grader, LABEL)  # other contracts travel in a grade(sample, item) adapter
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(BinaryJudge, RangeJudge)
def _judge_support(platform: OpenAIPlatform, grader: BinaryJudge | RangeJudge | RubricJudge) -> Support:
    exact = portable_or_reason(grader)
    if isinstance(exact, str):
        return Support.no(exact)
    try:
        openai_judge.check(exact)
    except PlatformError as exc:
        return Support.no(str(exc))
    return Support.yes()


@_SUPPORT.on(RubricJudge)
def _rubric_support(platform: OpenAIPlatform, grader: RubricJudge) -> Support:
    if grader.provider != "openai":  # the rubric's own model provider, not an endpoint's
        return Support.no(f"score_model runs OpenAI models only, not {grader.provider}")
    return _judge_support(platform, grader)


@_SUPPORT.on(CompositeGrader)
def _composite_support(platform: OpenAIPlatform, grader: CompositeGrader) -> Support:
    for component in grader.components:
        sub = platform.can_export(component.grader)
        if not sub.ok:
            return Support.no(f"component {component.grader.key!r}: {sub.reason}")
        if component.grader.parts():
            return Support.no("multi graders cannot nest another multi grader")
    names = [formula_name(c.grader.key) for c in grader.components]
    if len(set(names)) != len(names):
        return Support.no("two components would get the same name in the formula")
    return Support.yes()


@_SUPPORT.on(OpenAIGrader)
def _openai_grader_support(platform: OpenAIPlatform, grader: OpenAIGrader) -> Support:
    return Support.yes()  # the criterion as OpenAI wrote it


@_JSON.on(OpenAIGrader)
def _openai_grader_json(platform: OpenAIPlatform, grader: OpenAIGrader,
                        warnings: list[str]) -> tuple[JsonObject, set[str]]:
    return grader.written(), {"criterion", "name", "as_written"}  # written back exactly as it was read


@_JSON.on(BuiltinGrader)
def _builtin_json(platform: OpenAIPlatform, grader: BuiltinGrader, warnings: list[str]) -> tuple[JsonObject, set[str]]:
    o = grader.options
    if grader.function == "exact_match":
        op = "ne" if o.negate else "eq"
        if grader.strips:
            warnings.append(f"{grader.key}: string_check {op} compares without trimming whitespace")
    else:
        op = "like" if o.case_sensitive else "ilike"
    if o.empty_submission_zero or o.empty_reference_zero:
        warnings.append(f"{grader.key}: string_check compares an empty output or reference as text; "
                        "the studio scores it 0.0 (empty_submission_zero / empty_reference_zero, "
                        "Letta's rules): turn them off to match")
    reference = (o.reference if o.reference is not None
                 else f"{{{{ item.{o.reference_field} }}}}" if o.reference_field else EXPECTED)
    return ({"type": "string_check", "name": grader.key, "input": OUTPUT, "reference": reference, "operation": op},
            {"function", "options"})


@_JSON.on(FunctionGrader)
def _function_json(platform: OpenAIPlatform, grader: FunctionGrader, warnings: list[str]) -> tuple[JsonObject, set[str]]:
    source = grader.source
    if grader.contract != "mka1_sample":
        source = adapter_module(grader, "openai")
        warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated "
                        "grade(sample, item) adapter (the question reaches it as one user turn)")
    return {"type": "python", "name": grader.key, "source": source}, {"source", "contract"}


@_JSON.on(BinaryJudge, RubricJudge, RangeJudge)
def _judge_json(platform: OpenAIPlatform, grader: BinaryJudge | RubricJudge | RangeJudge,
                warnings: list[str]) -> tuple[JsonObject, None]:
    return openai_judge.to_json(grader, portable(grader), warnings), None  # the whole definition travels


@_JSON.on(CompositeGrader)
def _composite_json(platform: OpenAIPlatform, grader: CompositeGrader, warnings: list[str]) -> tuple[JsonObject, set[str]]:
    subs = {}
    for c in grader.components:
        subs[formula_name(c.grader.key)] = platform.to_json(c.grader, warnings)
        if c.name:
            warnings.append(f"{grader.key}: component label {c.name!r} is not exported")
    return ({"type": "multi", "name": grader.key, "graders": subs, "calculate_output": platform.formula(grader)},
            {"mode", "components"})


@_NOTES.on(FunctionGrader)
def _function_notes(grader: FunctionGrader) -> list[str]:
    return [f"{grader.key}: OpenAI's sample has output_text/output_json, not MKA1's extracted_output"]


@_NOTES.on(BinaryJudge, RubricJudge, RangeJudge)
def _judge_notes(grader: BinaryJudge | RubricJudge | RangeJudge) -> list[str]:
    return list(openai_judge.notes(grader, portable(grader)))


class OpenAIPlatform(Platform):
    name = "openai"
    label = LABEL
    imports = True

    def _can_export(self, grader: GraderDefinition) -> Support:
        if not plain_extractor(grader):
            return Support.no("OpenAI graders read the output text; they have no extractors")
        check = _SUPPORT.of(grader)
        return check(self, grader) if check is not None else Support.no(self.no_form(get_kind(grader.kind)))

    def no_form(self, kind: GraderKind) -> str:
        return f"OpenAI graders have no {kind.kind.replace('_', ' ')} equivalent"

    def to_json(self, grader: GraderDefinition, warnings: list[str]) -> JsonObject:
        write = _JSON.of(grader)
        if write is None:  # pragma: no cover
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        data, keep = write(self, grader, warnings)
        if keep is not None:  # None: the whole definition travels (a judge's)
            warnings += unexported(grader, {"extractor"} | keep, LABEL)
        return data

    @staticmethod
    def formula(grader: CompositeGrader) -> str:
        """HUD's combine rule as a formula: positive weights normalised, negative ones as penalties."""
        names = [(formula_name(c.grader.key), c.weight) for c in grader.components]
        if grader.mode != "weighted":
            return f"{'max' if grader.mode == 'any' else 'min'}({', '.join(n for n, _ in names)})"
        positive = [(n, w) for n, w in names if w > 0]
        text = ""
        if positive:
            total = sum(w for _, w in positive)
            text = "(" + " + ".join(f"{w!r} * {n}" for n, w in positive) + f") / {total!r}"
        for n, w in names:
            if w <= 0:
                text += f" - {-w!r} * {n}" if text else f"-{-w!r} * {n}"
        return text

    def _export(self, grader: GraderDefinition) -> ExportResult:
        warnings: list[str] = []
        data = self.to_json(grader, warnings)
        notes = note(grader) if (note := _NOTES.of(grader)) is not None else []
        return ExportResult(files={f"{grader.key}.openai.json": dump_json(data)}, warnings=warnings, notes=notes)

    # ---- import -------------------------------------------------------------------------------

    def detect(self, path: Path) -> bool:
        """Any of the five shapes of an OpenAI eval (``openai_evals.read_eval``), well formed or not:
        a malformed one is then refused by its first bad field, not as an unknown format."""
        return openai_evals.looks_like(peek_json(path))

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        """One grader per testing criterion (``openai_evals.grader_for``); what is read but has no
        effect here is a warning naming its path."""
        read = openai_evals.load(path)
        keys = openai_evals.unique_keys([str(c.get("name", "")) for _, c in read.criteria])
        graders = [openai_evals.grader_for(c, k) for (_, c), k in zip(read.criteria, keys, strict=True)]
        return ImportResult(graders=graders, warnings=list(read.not_carried))

    def from_json(self, data: JsonObject, key: str | None = None) -> GraderDefinition:
        if not isinstance(data, dict):
            raise PlatformError("an OpenAI grader must be a JSON object")
        kind = data.get("type")
        name = str(data.get("name", ""))
        grader_key = key or slug(name)
        try:
            if kind == "string_check":
                op = data["operation"]
                ref = data["reference"]
                options: JsonObject = {"empty_submission_zero": False, "empty_reference_zero": False}
                if not re.fullmatch(r"\{\{\s*sample\.output_text\s*\}\}", str(data.get("input", OUTPUT))):
                    raise PlatformError(
                        f"string_check {name!r} compares {data.get('input')!r}; the studio's comparisons read "
                        f"the output text ({OUTPUT}) only"
                    )
                field = re.fullmatch(r"\{\{\s*item\.(\w+)\s*\}\}", ref)
                if field and field.group(1) != "reference":  # item.reference is the sample's expected answer
                    options["reference_field"] = field.group(1)
                elif not field:
                    if "{{" in ref:
                        raise PlatformError(f"string_check {name!r}: the reference {ref!r} is a template the "
                                            "studio does not read; use {{ item.<field> }} or a literal")
                    options["reference"] = ref
                if op in ("eq", "ne"):
                    options.update(strip=False, negate=op == "ne")
                    return BuiltinGrader(key=grader_key, function="exact_match", options=options)
                if op == "like":
                    options["case_sensitive"] = True
                return BuiltinGrader(key=grader_key, function="contains", options=options)
            if kind == "python":
                return FunctionGrader(key=grader_key, source=data["source"], contract="mka1_sample")
            if kind == "score_model":
                return openai_judge.rubric_from(grader_key, data) or self._rubric(grader_key, data)
            if kind == "label_model":
                return openai_judge.binary_from(grader_key, data) or self._binary(grader_key, data)
            if kind == "multi":
                return self._multi(grader_key, data)
        except KeyError as exc:
            raise PlatformError(f"OpenAI grader {name!r}: missing field {exc}") from exc
        if kind == "text_similarity":
            raise PlatformError(f"OpenAI grader {name!r}: text_similarity has no studio grader kind yet")
        raise PlatformError(f"OpenAI grader {name!r}: unknown type {kind!r}")

    @staticmethod
    def _text(message: JsonObject) -> str:
        content = message.get("content", "")
        if isinstance(content, dict):
            content = content.get("text", "")
        if not isinstance(content, str):
            raise PlatformError("only text message content can be imported")
        return content

    def _rubric(self, key: str, data: JsonObject) -> RubricJudge:
        low, high = (data.get("range") or [0, 1])[:2]
        if (low, high) != (0, 1):
            raise PlatformError(f"score_model {data['name']!r} scores {low}..{high}; studio rubric judges score 0..1")
        messages = data["input"]
        system = [self._text(m) for m in messages if m.get("role") in ("system", "developer")]
        user = [self._text(m) for m in messages if m.get("role") == "user"]
        if len(user) != 1 or len(system) > 1:
            raise PlatformError(f"score_model {data['name']!r}: expected one user message and at most one system message")
        params = data.get("sampling_params") or {}
        return RubricJudge(
            key=key,
            model=data["model"],
            prompt=from_jinja(user[0], PROMPT_FIELDS, "item.{}"),
            system_prompt=system[0] if system else None,
            temperature=params.get("temperature") or 0.0,
            max_tokens=params.get("max_completions_tokens"),
        )

    def _binary(self, key: str, data: JsonObject) -> BinaryJudge:
        if sorted(data["labels"]) != ["FAIL", "PASS"] or data["passing_labels"] != ["PASS"]:
            raise PlatformError(
                f"label_model {data['name']!r} uses labels {data['labels']}; only PASS/FAIL maps to a binary judge"
            )
        system = next((self._text(m) for m in data["input"] if m.get("role") in ("system", "developer")), "")
        return BinaryJudge(key=key, model=data["model"], criteria=system.removeprefix(BINARY_PREAMBLE))

    def _multi(self, key: str, data: JsonObject) -> CompositeGrader:
        if not isinstance(data.get("graders"), dict) or not data["graders"]:
            raise PlatformError(f"multi {data.get('name')!r}: graders must be a map of name -> grader")
        validate_with_sdk(data)
        subs = {n: self.from_json(g) for n, g in data["graders"].items()}
        mode, weights = parse_formula(data["calculate_output"], set(subs))
        return CompositeGrader(
            key=key, mode=mode, components=[Component(grader=subs[n], weight=weights.get(n, 1.0)) for n in subs]
        )


def validate_with_sdk(data: JsonObject) -> None:
    """Check a multi grader with the ``openai`` package's own types where it is installed: each
    sub-grader with its type's model, and the multi grader itself (the SDK types ``graders`` as one
    grader, so it is checked with each in turn)."""
    try:
        from openai.types import graders as sdk
    except ImportError:
        return
    from pydantic import ValidationError

    models = {"string_check": sdk.StringCheckGrader, "text_similarity": sdk.TextSimilarityGrader,
              "score_model": sdk.ScoreModelGrader, "label_model": sdk.LabelModelGrader,
              "python": sdk.PythonGrader}
    for name, sub in data["graders"].items():
        try:
            if not isinstance(sub, dict) or sub.get("type") not in models:
                raise PlatformError(f"multi {data.get('name')!r}: {name!r} is not a grader the openai package types")
            models[sub["type"]].model_validate(sub)
            sdk.MultiGrader.model_validate({**data, "graders": sub})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise PlatformError(f"multi {data.get('name')!r}: the openai package rejects {name!r}: "
                                f"{first['msg']} at {'.'.join(str(p) for p in first['loc'])}") from None


def parse_formula(text: str, names: set[str]) -> tuple[str, dict[str, float]]:
    """Mode and weights from a ``calculate_output`` written as ``formula`` writes them."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise PlatformError(f"calculate_output {text!r} is not a formula: {exc}") from exc
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id in ("max", "min"):
        return ("any" if tree.func.id == "max" else "all"), {}
    weights: dict[str, float] = {}
    divisors: list[float] = []

    def term(node: ast.expr, sign: float) -> None:
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mult)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, (int, float))
            and isinstance(node.right, ast.Name)
        ):
            weights[node.right.id] = sign * float(node.left.value)
            return
        if isinstance(node, ast.Name):
            weights[node.id] = sign
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return term(node.operand, -sign)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            term(node.left, sign)
            return term(node.right, sign if isinstance(node.op, ast.Add) else -sign)
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
                and isinstance(node.right.value, (int, float))):
            divisors.append(float(node.right.value))
            return term(node.left, sign)
        raise PlatformError(f"calculate_output {text!r} is not a weighted sum the studio can read")

    term(tree, 1.0)
    positive = sum(w for w in weights.values() if w > 0)
    if divisors != ([positive] if positive else []) and not (divisors == [] and positive == 1.0):
        raise PlatformError(f"calculate_output {text!r} does not divide by the sum of its positive weights")
    unknown = set(weights) - names
    if unknown:
        raise PlatformError(f"calculate_output refers to unknown graders {sorted(unknown)}")
    return "weighted", weights


PLATFORM = OpenAIPlatform()
