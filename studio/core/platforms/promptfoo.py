"""promptfoo: ``assert:`` entries in a config's ``defaultTest`` (so they apply to every test case).

Each assertion's ``metric`` carries the grader's key. Built-ins map to equals/contains/regex/is-json
family, binary judges to ``llm-rubric``, range judges to an ``llm-rubric`` that keeps the scale, pre-built RAG judges to
context-faithfulness / answer-relevance / context-relevance, promptfoo-contract functions to
``python`` with a ``file://`` script, weighted composites to ``assert-set`` with weights.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from studio.core.graders.jsregex import JS_SPACE
from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.providers import provider_of
from studio.core.kinds import ByKind, GraderKind, get_kind
from studio.core.models import (
    BinaryJudge,
    BuiltinGrader,
    Component,
    CompositeGrader,
    FunctionGrader,
    GraderBase,
    GraderDefinition,
    JudgeBase,
    PrebuiltJudge,
    RangeJudge,
    RubricJudge,
)

from ._adapters import adapted, adapter_module, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Skipped, Support
from ._carried import IDENTITY, META_KEY, adapted_fields, identity, restore_identity, unadapted
from ._fields import (
    dump_yaml,
    endpoint_config,
    load_yaml_text,
    peek_yaml,
    read_text,
    safe_relative,
    slug,
    unexported,
)
from ._judge_prompts import portable_or_reason
from ._promptfoo_js import MAPPED as JS_MAPPED
from ._promptfoo_js import javascript_grader
from ._promptfoo_judge import is_studio_judge, judge_assertion
from ._promptfoo_judge import judge_from as studio_judge_from
from ._promptfoo_range import is_range_provider, judge_from, range_assertion
from .letta import builtin_mismatch
from .openai import plain_extractor

LABEL = "promptfoo"
EXPECTED = "{{expected}}"
BUILTIN_TYPES = {  # (function, case_sensitive) -> assertion type
    ("exact_match", True): "equals",
    ("contains", True): "contains",
    ("contains", False): "icontains",
    ("contains_any", True): "contains-any",
    ("contains_any", False): "icontains-any",
    ("contains_all", True): "contains-all",
    ("contains_all", False): "icontains-all",
    ("regex_match", True): "regex",
    ("is_json", True): "is-json",
    ("starts_with", True): "starts-with",
}
CASE_DEFAULT = {"exact_match": True, "regex_match": True, "is_json": True, "starts_with": True}
SEMANTICS: dict[str, JsonObject] = {
    name: {"case_sensitive": (None, True, False), "strip": (None, True, False), "empty_submission_zero": (True, False), "empty_reference_zero": (True, False),
           "empty_reference_error": (False, True), "regex_dialect": ("python", "javascript"), "negate": (False, True),
           "reference": None, "values": None}
    for name in {f for f, _ in BUILTIN_TYPES}
}
PREBUILT_TYPES = {
    "faithfulness": "context-faithfulness",
    "answer_relevancy": "answer-relevance",
    "context_relevancy": "context-relevance",
}
PROVIDER_PREFIX = "openai:"


# promptfoo's handlers refuse an empty value (the assertion fails, negated or not) for these
EMPTY_VALUE_FAILS = ("contains", "starts_with", "regex_match")


def empty_rule(function: str, reference_default: bool) -> tuple[bool, bool]:
    """(empty_submission_zero, empty_reference_zero) as promptfoo behaves for this function; for a
    function that reads no single reference the second is irrelevant and keeps ``reference_default``."""
    if function in EMPTY_VALUE_FAILS:
        return False, True
    if function == "exact_match":
        return False, False
    return False, reference_default


def _case(grader: BuiltinGrader) -> bool:
    value = grader.options.case_sensitive
    return CASE_DEFAULT.get(grader.function, False) if value is None else value


_JS_SPACE = re.compile(f"[{JS_SPACE}]")
_JS_SPACE_RUNS = re.compile(f"^[{JS_SPACE}]+|[{JS_SPACE}]+$")  # JavaScript's String.prototype.trim


def split_values(value: str) -> list[str]:
    """A contains-any/all value written as one string, split as promptfoo does: on commas, each field
    trimmed, empty fields dropped, a double-quoted field kept whole (``\\"`` or ``""`` is a quote)."""
    fields: list[str] = []
    i = 0
    while i < len(value):
        while i < len(value) and (value[i] == "," or _JS_SPACE.fullmatch(value[i])):
            i += 1
        if i >= len(value):
            break
        if value[i] == '"':
            field, i, closed = "", i + 1, False
            while i < len(value):
                if value[i] == "\\" and value[i + 1:i + 2] in ('"', "\\"):
                    field, i = field + value[i + 1], i + 2
                elif value[i] == '"' and value[i + 1:i + 2] == '"':
                    field, i = field + '"', i + 2
                elif value[i] == '"':
                    i, closed = i + 1, True
                    break
                else:
                    field, i = field + value[i], i + 1
            if not closed:
                raise PlatformError(f"unterminated quoted field in {value!r}")
            while i < len(value) and _JS_SPACE.fullmatch(value[i]):
                i += 1
            if i < len(value) and value[i] != ",":
                raise PlatformError(f"expected a comma after a quoted field in {value!r}")
        else:
            end = value.find(",", i)
            end = len(value) if end < 0 else end
            field, i = _JS_SPACE_RUNS.sub("", value[i:end]), end
        fields.append(field)
    return fields


def assert_line(text: str, index: int, kind: str) -> int | None:
    """The 1-based line of the ``index``-th assertion's ``type:`` in the config (None if not found)."""
    seen = 0
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*(?:-\s*)?type:\s*", line):
            if seen == index:
                return number
            seen += 1
    return None


# ---- what promptfoo does with each kind it carries (keyed by kind: ``kinds.ByKind``) ------------

_SUPPORT: ByKind[Support] = ByKind("promptfoo support")
#: each kind's assertion: (data, the definition fields it carries or None when the whole definition
#: travels, whether promptfoo grades it with a model of its own that the assertion's provider names)
_ASSERTION: ByKind[tuple[JsonObject, set[str] | None, bool]] = ByKind("promptfoo assertion")
Assertion = tuple[JsonObject, set[str] | None, bool]


@_SUPPORT.on(BuiltinGrader)
def _builtin_support(platform: PromptfooPlatform, grader: BuiltinGrader) -> Support:
    problem = builtin_mismatch(grader, SEMANTICS, LABEL)
    if problem is None and (grader.function, _case(grader)) not in BUILTIN_TYPES:
        problem = f"promptfoo has no case-insensitive {grader.function}"
    if problem is None and grader.function in ("contains_any", "contains_all") and not grader.options.values:
        problem = f"{grader.function} needs its list of values (promptfoo splits a single string on commas)"
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(FunctionGrader)
def _function_support(platform: PromptfooPlatform, grader: FunctionGrader) -> Support:
    problem = refusal(grader, LABEL)  # other contracts travel in a get_assert adapter
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(RubricJudge)
def _rubric_support(platform: PromptfooPlatform, grader: RubricJudge) -> Support:
    exact = portable_or_reason(grader)  # the studio's own messages (_promptfoo_judge), or no fallback
    return Support.no(exact) if isinstance(exact, str) else Support.yes()


@_SUPPORT.on(BinaryJudge)
def _binary_support(platform: PromptfooPlatform, grader: BinaryJudge) -> Support:
    if not isinstance(portable_or_reason(grader), str):
        return Support.yes()  # the studio's own messages (_promptfoo_judge)
    if grader.system_template or grader.user_template:
        return Support.no("llm-rubric uses promptfoo's own grading prompt; custom templates cannot follow")
    return Support.yes()  # promptfoo's llm-rubric


@_SUPPORT.on(RangeJudge, PrebuiltJudge)
def _promptfoo_support(platform: PromptfooPlatform, grader: RangeJudge | PrebuiltJudge) -> Support:
    return Support.yes()  # the studio's messages where they travel exactly, else promptfoo's own form


@_SUPPORT.on(CompositeGrader)
def _composite_support(platform: PromptfooPlatform, grader: CompositeGrader) -> Support:
    if grader.mode != "weighted":
        return Support.no(f"assert-set averages by weight; {grader.mode} (max/min) has no promptfoo form")
    if any(c.weight < 0 for c in grader.components):
        return Support.no("assert-set weights cannot be negative (penalties)")
    for c in grader.components:
        sub = platform.can_export(c.grader)
        if not sub.ok:
            return Support.no(f"component {c.grader.key!r}: {sub.reason}")
    return Support.yes()


@_ASSERTION.on(BuiltinGrader)
def _builtin_assertion(platform: PromptfooPlatform, grader: BuiltinGrader, warnings: list[str],
                       files: dict[str, str]) -> Assertion:
    o = grader.options
    kind = BUILTIN_TYPES[(grader.function, _case(grader))]
    data: JsonObject = {"type": ("not-" if o.negate else "") + kind}
    if grader.function in ("contains_any", "contains_all"):
        data["value"] = list(o.values)
    elif grader.function != "is_json":
        data["value"] = o.reference if o.reference is not None else EXPECTED
    if (o.empty_submission_zero, o.empty_reference_zero) != empty_rule(grader.function, o.empty_reference_zero):
        warnings.append(f"{grader.key}: promptfoo compares an empty output as text and fails an empty "
                        f"value only for {', '.join(EMPTY_VALUE_FAILS)}; the studio's empty_submission_zero / "
                        "empty_reference_zero (Letta's rules) differ: set them as promptfoo does to match")
    if grader.function == "regex_match" and o.regex_dialect == "python" and o.reference is not None \
            and re.search(r"\\[dwbsSDWB]|\$|\.|\(\?[aiLmsux]", o.reference):
        warnings.append(f"{grader.key}: promptfoo reads the pattern as JavaScript (ASCII \\d, \\w, \\b; "
                        "$ only at the end); set regex_dialect: javascript to score it that way here")
    if grader.strips and grader.function == "exact_match":
        warnings.append(f"{grader.key}: promptfoo equals compares without trimming whitespace")
    return data, {"function", "options"}, False


@_ASSERTION.on(FunctionGrader)
def _function_assertion(platform: PromptfooPlatform, grader: FunctionGrader, warnings: list[str],
                        files: dict[str, str]) -> Assertion:
    if grader.contract == "promptfoo":
        files[f"{grader.key}.py"] = grader.source
    else:
        files[f"{grader.key}.py"] = adapter_module(grader, "promptfoo")
        warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated get_assert "
                        "adapter (the question reaches it as one user turn)")
    own = grader.contract == "promptfoo" and grader.function_name
    ref = f"file://{grader.key}.py" + (f":{grader.function_name}" if own else "")
    return {"type": "python", "value": ref}, {"source", "contract", "function_name"}, False


def _exact_assertion(grader: BinaryJudge | RangeJudge | RubricJudge, exact: JsonValue,
                     files: dict[str, str]) -> Assertion:
    """The studio's own judge messages, sent by a generated provider (``_promptfoo_judge``)."""
    data, judge_files = judge_assertion(grader, exact)
    files.update(judge_files)
    return data, None, False


@_ASSERTION.on(RubricJudge)
def _rubric_assertion(platform: PromptfooPlatform, grader: RubricJudge, warnings: list[str],
                      files: dict[str, str]) -> Assertion:
    return _exact_assertion(grader, portable_or_reason(grader), files)  # can_export refused the rest


@_ASSERTION.on(BinaryJudge)
def _binary_assertion(platform: PromptfooPlatform, grader: BinaryJudge, warnings: list[str],
                      files: dict[str, str]) -> Assertion:
    exact = portable_or_reason(grader)
    if not isinstance(exact, str):
        warnings.append(f"{grader.key}: approximated: an NA verdict (the studio leaves the sample out) "
                        "is a provider error in promptfoo")
        return _exact_assertion(grader, exact, files)
    warnings.append(f"{grader.key}: approximated: {exact}; promptfoo's own "
                    "llm-rubric prompt is used instead of the studio's")
    if grader.examples:
        warnings.append(f"{grader.key}: {len(grader.examples)} few-shot examples are not exported")
    return {"type": "llm-rubric", "value": grader.criteria}, {"criteria", "examples", "model", "endpoint"}, True


@_ASSERTION.on(RangeJudge)
def _range_assertion(platform: PromptfooPlatform, grader: RangeJudge, warnings: list[str],
                     files: dict[str, str]) -> Assertion:
    exact = portable_or_reason(grader)
    if not isinstance(exact, str):
        return _exact_assertion(grader, exact, files)
    warnings.append(f"{grader.key}: approximated: {exact}; a rubric prompt "
                    "written for promptfoo is used instead of the studio's")
    config = endpoint_config(grader.endpoint)
    if grader.endpoint and config is None and not grader.model:
        warnings.append(f"{grader.key}: endpoint {grader.endpoint!r} is not known to this export, so "
                        "its model and base URL are not written: set them in the provider's config")
    data, provider_files = range_assertion(grader, config)
    files.update(provider_files)
    if grader.shots:
        warnings.append(f"{grader.key}: {len(grader.shots)} few-shot examples are not exported")
    warnings.append(f"{grader.key}: promptfoo asks for one sampled SCORE (the studio weighs the "
                    "score token's logprobs when the endpoint gives them)")
    return data, {"criteria", "model", "endpoint", "score_range", "normalize", "evaluation_steps",
                  "subrange_expectations", "temperature", "max_tokens"}, False


@_ASSERTION.on(PrebuiltJudge)
def _prebuilt_assertion(platform: PromptfooPlatform, grader: PrebuiltJudge, warnings: list[str],
                        files: dict[str, str]) -> Assertion:
    data = {"type": PREBUILT_TYPES[grader.metric_type]}
    warnings.append(f"{grader.key}: approximated: promptfoo's {data['type']} asks with its own prompts and "
                    "scoring, not the studio's per-statement calls")
    return data, {"metric_type", "model", "endpoint"}, True


@_ASSERTION.on(CompositeGrader)
def _composite_assertion(platform: PromptfooPlatform, grader: CompositeGrader, warnings: list[str],
                         files: dict[str, str]) -> Assertion:
    data = {"type": "assert-set", "assert": [platform._component(c, warnings, files) for c in grader.components]}
    return data, {"mode", "components"}, False


class PromptfooPlatform(Platform):
    name = "promptfoo"
    label = LABEL
    imports = True

    def _can_export(self, grader: GraderDefinition) -> Support:
        if not plain_extractor(grader):
            return Support.no("promptfoo assertions read the output text; they have no extractors")
        check = _SUPPORT.of(grader)
        return check(self, grader) if check is not None else Support.no(self.no_form(get_kind(grader.kind)))

    def no_form(self, kind: GraderKind) -> str:
        return f"promptfoo has no {kind.kind.replace('_', ' ')} assertion"

    def assertion(self, grader: GraderDefinition, warnings: list[str], files: dict[str, str]) -> JsonObject:
        write = _ASSERTION.of(grader)
        if write is None:  # pragma: no cover
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        data, kept, asks = write(self, grader, warnings, files)
        if kept is None:  # the studio's own judge: the whole definition travels
            data["metric"] = grader.key
            return data
        keep = {"extractor"} | kept
        if asks:  # an assertion promptfoo grades with a model of its own
            provider = self.provider(grader, warnings)
            if provider:
                data["provider"] = provider
        data["metric"] = grader.key
        warnings += unexported(grader, keep | set(IDENTITY), LABEL)  # identity travels in the config
        return data

    @staticmethod
    def provider(grader: GraderBase, warnings: list[str]) -> str | JsonObject | None:
        """A provider promptfoo can call: the endpoint's base URL and model when the export knows the
        endpoint (an OpenAI-compatible chat provider), else ``openai:<model>``."""
        if not isinstance(grader, JudgeBase):  # an assertion that asks a model is a judge's
            raise TypeError(f"a {grader.kind} grader names no model")
        config = endpoint_config(grader.endpoint)
        if config is None:
            if grader.endpoint and not grader.model:
                warnings.append(f"{grader.key}: endpoint {grader.endpoint!r} is not known to this export, so "
                                "its model and base URL are not written: set the assertion's provider")
                return None
            return PROVIDER_PREFIX + grader.model if grader.model else None
        model = grader.model or config.model
        spec: JsonObject = {"id": f"{provider_of(config).promptfoo_id}:{model}", "config": {"apiBaseUrl": config.base_url}}
        if getattr(config, "api_key_env", None):
            spec.setdefault("config", {})["apiKeyEnvar"] = config.api_key_env
        return spec

    def _component(self, c: Component, warnings: list[str], files: dict[str, str]) -> JsonObject:
        data = self.assertion(c.grader, warnings, files)
        if c.weight != 1.0:
            data["weight"] = c.weight
        if c.name:
            warnings.append(f"component label {c.name!r} is not exported")
        return data

    def _export(self, grader: GraderDefinition) -> ExportResult:
        return self._config([grader], f"{grader.key}.promptfooconfig.yaml")

    def export_many(self, graders: Sequence[GraderDefinition]) -> ExportResult:
        ok = [g for g in graders if self.can_export(g).ok]
        result = self._config(ok, "promptfooconfig.yaml") if ok else ExportResult()
        result.refused.update({g.key: self.can_export(g).reason for g in graders if g not in ok})
        return result

    def _config(self, graders: Sequence[GraderDefinition], config_file: str,
                tests: list[JsonObject] | None = None,
                provider: tuple[str, JsonObject] | None = None) -> ExportResult:
        """One config; with ``tests`` (a dataset's rows) it runs as is: the echo provider answers each
        test with its stored completion, which the asserts grade; or ``provider`` (prompt, provider)
        answers each test, a model called afresh."""
        result = ExportResult()
        asserts = [self.assertion(g, result.warnings, result.files) for g in graders]
        for grader, item in zip(graders, asserts, strict=True):
            carried_fields = identity(grader)  # what promptfoo has no field for, in its free config
            if (function := adapted(grader, "promptfoo")) is not None:
                carried_fields["adapted"] = adapted_fields(function)
            if carried_fields:
                item.setdefault("config", {})[META_KEY] = carried_fields
        config: JsonObject = {
            "description": "Graders exported by Grader Studio",
            "prompts": ["{{input}}"],
            "providers": ["echo"],
            "defaultTest": {"assert": asserts},
            "tests": [],
        }
        if tests is not None and provider is not None:
            config.update(prompts=[provider[0]], providers=[provider[1]], tests=tests)
        elif tests is not None:
            config.update(prompts=["{{completion}}"], providers=[{"id": "echo", "label": "stored completions"}],
                          tests=tests)
            result.notes.append(f"{config_file}: each test's output is its stored completion (echo of "
                                "{{completion}}); to grade a model's fresh answers set providers and prompts")
        else:
            result.notes.append(
                f"{config_file}: the asserts apply to every test; add tests with vars input and expected, "
                "and set providers (echo is a placeholder)"
            )
        result.files[config_file] = dump_yaml(config)
        return result

    # ---- import -------------------------------------------------------------------------------

    def detect(self, path: Path) -> bool:
        data = peek_yaml(path)
        return isinstance(data, dict) and bool(self._asserts(data)) and (
            "prompts" in data or "providers" in data or "tests" in data or "defaultTest" in data
        )

    @staticmethod
    def _asserts(config: JsonObject) -> list[JsonObject]:
        return [item for _where, item in _placed_asserts(config) if isinstance(item, dict)]

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        text = read_text(path)
        data = load_yaml_text(text, path.name)
        if not isinstance(data, dict):
            raise PlatformError(f"{path.name} is not a promptfoo config")
        placed = _placed_asserts(data)
        result = ImportResult()
        seen: dict[str, str] = {}
        for n, (where, item) in enumerate(placed):
            line = assert_line(text, n, "")
            if not isinstance(item, dict):
                result.skipped.append(Skipped(where=where, kind=type(item).__name__, line=line,
                                              reason="an assertion must be a mapping with a type"))
                continue
            kind = str(item.get("type") or "(no type)")
            grader_key = key if key and len(placed) == 1 else slug(str(item.get("metric") or f"{item.get('type')}-{n + 1}"))
            if grader_key in seen:
                result.skipped.append(Skipped(where=where, kind=kind, line=line, reason=(
                    f"its key {grader_key!r} (the metric) is already taken by {seen[grader_key]}; give it its own metric")))
                continue
            config = item.get("config")
            carried_fields = config.get(META_KEY) if isinstance(config, dict) else None
            if isinstance(config, dict) and carried_fields is not None:  # the studio's own entry in the free config: mapped, not lost
                rest = {k: v for k, v in config.items() if k != META_KEY}
                item = {k: v for k, v in item.items() if k != "config"} | ({"config": rest} if rest else {})
            try:
                grader = restore_identity(self.from_assert(item, grader_key, path.parent), carried_fields)
                if isinstance(carried_fields, dict):
                    grader = unadapted(grader, carried_fields.get("adapted"), self.name)
            except (PlatformError, ValueError) as exc:
                result.skipped.append(Skipped(where=where, kind=kind, line=line, reason=_sentence(exc)))
                continue
            result.graders.append(grader)
            seen[grader_key] = where
            result.warnings += [f"{where} ({kind}): {w}" for w in unmapped_fields(item)]
        if not result.graders:
            raise PlatformError(f"{path.name}: no assertion imported ({'; '.join(result.report())})")
        return result

    def from_assert(self, item: JsonObject, key: str, base: Path) -> GraderDefinition:
        kind = str(item.get("type", ""))
        negate = kind.startswith("not-")
        kind = kind.removeprefix("not-")
        value = item.get("value")
        builtins = {v: k for k, v in BUILTIN_TYPES.items()}
        model = None
        provider = item.get("provider")
        if isinstance(provider, dict):
            provider = provider.get("id")
        if isinstance(provider, str):
            model = provider.removeprefix(PROVIDER_PREFIX).removeprefix("chat:").removeprefix("anthropic:messages:")
        if item.get("transform") is not None and kind != "javascript":
            raise PlatformError("a transform rewrites the output before the check; the studio has no transform")
        if kind in builtins:
            function, case = builtins[kind]
            submission_zero, reference_zero = empty_rule(function, False)
            options: JsonObject = {"negate": negate, "empty_submission_zero": submission_zero,
                                       "empty_reference_zero": reference_zero}
            if function in EMPTY_VALUE_FAILS:  # promptfoo's invariant: an empty value is an error, not 0
                options["empty_reference_error"] = True
            if case != CASE_DEFAULT.get(function, False):
                options["case_sensitive"] = case
            if function == "exact_match":
                options["strip"] = False
            if function == "regex_match":
                options["regex_dialect"] = "javascript"  # promptfoo builds new RegExp(value)
            if isinstance(value, str) and "{{" in value and value != EXPECTED:
                raise PlatformError(f"the value {value!r} is a template; only {EXPECTED} maps to the sample's answer")
            if function in ("contains_any", "contains_all"):
                if value is None or value == "":
                    raise PlatformError(f"{kind} has no value; promptfoo fails it with an error on every test")
                if value == EXPECTED:
                    raise PlatformError(f"{kind} splits {EXPECTED} on commas at run time; write the values as a list")
                options["values"] = ([str(v) for v in value] if isinstance(value, list)
                                     else split_values(str(value or "")))
            elif isinstance(value, list):
                options["values"] = [str(v) for v in value]
            elif value is not None and value != EXPECTED:
                options["reference"] = str(value)
            return BuiltinGrader(key=key, function=function, options=options)
        if kind == "javascript":
            return javascript_grader(item, key, base, negate)
        if item.get("transform") is not None or item.get("contextTransform") is not None:
            raise PlatformError("a transform rewrites the output before the check; the studio has no transform")
        if negate:
            raise PlatformError(f"not-{kind} has no studio equivalent")
        if kind == "python":
            if not (isinstance(value, str) and value.startswith("file://")):
                raise PlatformError("inline Python assertions are expressions, not get_assert files; only file:// imports")
            ref = value.removeprefix("file://")
            file_ref, _, fn = ref.partition(":") if ref.count(":") == 1 else (ref, "", "")
            source = read_text(safe_relative(base, file_ref))
            return FunctionGrader(key=key, source=source, contract="promptfoo", function_name=fn or None)
        if kind == "llm-rubric" and is_studio_judge(item.get("provider")):
            return studio_judge_from(key, item["provider"])
        if kind == "llm-rubric" and is_range_provider(item.get("provider")):
            return judge_from(key, str(value), item["provider"])
        if kind == "llm-rubric":
            return BinaryJudge(key=key, criteria=str(value), model=model)
        if kind == "g-eval":
            return RangeJudge(key=key, criteria=str(value), model=model)
        prebuilt = {v: k for k, v in PREBUILT_TYPES.items()}
        if kind in prebuilt:
            return PrebuiltJudge(key=key, metric_type=prebuilt[kind], model=model)
        if kind == "assert-set":
            components = []
            for n, sub in enumerate(item.get("assert") or []):
                if not isinstance(sub, dict):
                    raise PlatformError(f"assert-set entry {n + 1} is not an assertion")
                sub_key = slug(str(sub.get("metric") or f"{key}-{n + 1}"))
                components.append(
                    Component(grader=self.from_assert(sub, sub_key, base), weight=float(sub.get("weight", 1.0)))
                )
            return CompositeGrader(key=key, components=components)
        raise PlatformError(f"promptfoo assertion type {kind!r} has no studio grader kind")


def _placed_asserts(config: JsonObject) -> list[tuple[str, JsonValue]]:
    """Every assertion of the config with its place: ``defaultTest assert 2``, ``tests[3] assert 1``
    (1-based, a test's description added when it has one), in file order."""
    found: list[tuple[str, JsonValue]] = []
    default = config.get("defaultTest")
    if isinstance(default, dict):
        found += [(f"defaultTest assert {i}", a) for i, a in enumerate(default.get("assert") or [], 1)]
    for t, test in enumerate(config.get("tests") or [], 1):
        if isinstance(test, dict):
            label = f"tests[{t}]" + (f" {test['description']!r}" if isinstance(test.get("description"), str) else "")
            found += [(f"{label} assert {i}", a) for i, a in enumerate(test.get("assert") or [], 1)]
    return found


#: what each family of assertion carries into its grader (anything else is reported as not mapped)
_MAPPED_FIELDS: dict[str, set[str]] = {
    "javascript": JS_MAPPED,
    "python": {"type", "value", "metric", "weight"},
    "llm-rubric": {"type", "value", "metric", "weight", "provider"},
    "g-eval": {"type", "value", "metric", "weight", "provider"},
    "assert-set": {"type", "assert", "metric", "weight"},
}
_BUILTIN_FIELDS = {"type", "value", "metric", "weight"}


def unmapped_fields(item: JsonObject) -> list[str]:
    """One line per field of an imported assertion the grader does not hold."""
    kind = str(item.get("type", "")).removeprefix("not-")
    mapped = _MAPPED_FIELDS.get(kind) or (
        {"type", "metric", "weight", "provider"} if kind in PREBUILT_TYPES.values() else _BUILTIN_FIELDS)
    lines = [f"field {name!r} is not mapped to the studio grader (ignored)" for name in item if name not in mapped]
    if "weight" in item and item.get("weight") not in (None, 1, 1.0):
        lines.append(f"weight {item['weight']!r} weighs the assertion inside its test's score; a studio grader "
                     "scores on its own (use a composite to weigh graders)")
    return lines


def _sentence(exc: Exception) -> str:
    text = str(exc).strip()
    return text[:1].lower() + text[1:] if text else type(exc).__name__


PLATFORM = PromptfooPlatform()
