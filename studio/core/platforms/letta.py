"""Letta evals: a suite YAML whose ``graders:`` map holds each grader, plus its ``.py``/prompt files.

Built-in comparisons whose semantics match Letta's become ``kind: tool`` built-ins, Letta-contract
function graders become ``kind: tool`` with ``file.py:fn``, rubric judges become ``kind: model_judge``
with a prompt file. The map key is the grader's key (Letta calls it the metric key).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.judges.kinds.rubric_judge import RUBRIC_SUBMISSION_SUFFIX, RUBRIC_SYSTEM
from studio.core.judges.templates import format_fields
from studio.core.kinds import ByKind, GraderKind, get_kind
from studio.core.models import (
    BuiltinGrader,
    BuiltinOptions,
    Extractor,
    FunctionGrader,
    GraderDefinition,
    Metric,
    RubricJudge,
)

from ._adapters import adapted, adapter_module, entry_name, refusal
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._carried import IDENTITY, META_KEY, adapted_fields, identity, restore_identity, unadapted
from ._fields import (
    dump_yaml,
    judge_model,
    load_yaml_text,
    peek_yaml,
    read_text,
    safe_relative,
    unexported,
)
from ._losses import skip, unmapped

LABEL = "Letta evals"
LETTA_BUILTINS = ("exact_match", "contains", "regex_match", "ascii_printable_only")
# Options each Letta built-in fixes; a studio grader matching these scores the same there.
LETTA_SEMANTICS: dict[str, JsonObject] = {
    "exact_match": {"case_sensitive": (None, True), "strip": (None, True)},
    "contains": {"case_sensitive": (None, False), "strip": (None, False)},
    "regex_match": {"case_sensitive": (None, True), "strip": (None, True, False)},
    "ascii_printable_only": {"case_sensitive": (None, True, False), "strip": (None, True, False)},
}


def builtin_mismatch(grader: BuiltinGrader, semantics: dict[str, JsonObject], label: str) -> str | None:
    """Why a built-in's options would score differently on the target, or None when they match.

    ``semantics[function][option]`` lists the values the target honours (None: any value); options
    not listed must keep their default.
    """
    if grader.function not in semantics:
        return f"{label} has no built-in {grader.function}"
    allowed = semantics[grader.function]
    default = BuiltinOptions()
    for name in BuiltinOptions.model_fields:
        value = getattr(grader.options, name)
        if name not in allowed:
            ok = value == getattr(default, name)
        else:
            ok = allowed[name] is None or value in allowed[name]  # None: any value
        if not ok:
            return f"{grader.function} in {label} cannot honour {name}={value!r}"
    return None


def grader_functions(source: str) -> list[str]:
    """Top-level functions decorated with ``@grader`` (Letta's custom tool graders)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if (isinstance(target, ast.Name) and target.id == "grader") or (
                    isinstance(target, ast.Attribute) and target.attr == "grader"
                ):
                    names.append(node.name)
    return names


# ---- what Letta does with each kind it carries (keyed by kind: ``kinds.ByKind``) ----------------

_SUPPORT: ByKind[Support] = ByKind("letta support")
#: each kind's ``graders:`` entry: (spec, the definition fields it carries), its files added
_ENTRY: ByKind[tuple[JsonObject, set[str]]] = ByKind("letta entry")


@_SUPPORT.on(BuiltinGrader)
def _builtin_support(grader: BuiltinGrader) -> Support:
    problem = builtin_mismatch(grader, LETTA_SEMANTICS, LABEL)
    return Support.no(problem) if problem else Support.yes()


@_SUPPORT.on(FunctionGrader)
def _function_support(grader: FunctionGrader) -> Support:
    if grader.contract != "letta":  # carried by a generated @grader adapter
        problem = refusal(grader, LABEL)
        return Support.no(problem) if problem else Support.yes()
    if not (grader.function_name or len(grader_functions(grader.source)) == 1):
        return Support.no("set the function name: the source has no single @grader function")
    return Support.yes()


@_SUPPORT.on(RubricJudge)
def _rubric_support(grader: RubricJudge) -> Support:
    return Support.yes()


@_ENTRY.on(BuiltinGrader)
def _builtin_entry(grader: BuiltinGrader, files: dict[str, str], warnings: list[str]) -> tuple[JsonObject, set[str]]:
    return {"kind": "tool", "function": grader.function}, {"function", "options"}


@_ENTRY.on(FunctionGrader)
def _function_entry(grader: FunctionGrader, files: dict[str, str], warnings: list[str]) -> tuple[JsonObject, set[str]]:
    if grader.contract != "letta":
        files[f"{grader.key}.py"] = adapter_module(grader, "letta")
        warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated @grader "
                        "adapter (the question reaches it as one user turn)")
        return {"kind": "tool", "function": f"{grader.key}.py:{entry_name(grader)}"}, {"source", "contract", "function_name"}
    fn = grader.function_name or grader_functions(grader.source)[0]
    files[f"{grader.key}.py"] = grader.source
    return {"kind": "tool", "function": f"{grader.key}.py:{fn}"}, {"source", "contract", "function_name"}


@_ENTRY.on(RubricJudge)
def _rubric_entry(grader: RubricJudge, files: dict[str, str], warnings: list[str]) -> tuple[JsonObject, set[str]]:
    # the studio shows the submission even when a rubric forgets {submission}: so does the export
    files[f"{grader.key}.prompt.txt"] = grader.prompt + (
        "" if "submission" in format_fields(grader.prompt) else RUBRIC_SUBMISSION_SUFFIX)
    spec: JsonObject = {"kind": "model_judge", "prompt_path": f"{grader.key}.prompt.txt"}
    model = judge_model(grader, LABEL, warnings)
    if model:
        spec["model"] = model
    spec.update(
        temperature=grader.temperature,
        provider=grader.provider,
        max_retries=grader.max_retries,
        timeout=grader.timeout,
    )
    # the studio's system text even when the judge keeps the default: Letta's own default differs
    spec["system_prompt"] = grader.system_prompt or RUBRIC_SYSTEM
    return spec, {"prompt", "system_prompt", "provider", "max_retries", "timeout", "model", "endpoint", "temperature"}


class LettaPlatform(Platform):
    name = "letta"
    label = LABEL
    imports = True

    def _can_export(self, grader: GraderDefinition) -> Support:
        check = _SUPPORT.of(grader)
        return check(grader) if check is not None else Support.no(self.no_form(get_kind(grader.kind)))

    def no_form(self, kind: GraderKind) -> str:
        return (f"Letta graders are tool functions and model judges; a {kind.kind.replace('_', ' ')} "
                "has no Letta equivalent (a rubric judge does)")

    def entry(self, grader: GraderDefinition, warnings: list[str]) -> tuple[JsonObject, dict[str, str]]:
        """The ``graders:`` entry and the files it refers to."""
        files: dict[str, str] = {}
        write = _ENTRY.of(grader)
        if write is None:  # pragma: no cover (can_export refused it)
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        spec, kept = write(grader, files, warnings)
        keep = {"name", "extractor"} | kept
        if grader.name:
            spec["display_name"] = grader.name
        if grader.extractor is not None:
            spec["extractor"] = grader.extractor.kind
            if grader.extractor.config:
                spec["extractor_config"] = dict(grader.extractor.config)
        if grader.metric != Metric():
            warnings.append(
                f"{grader.key}: metric {grader.metric.key!r} ({grader.metric.kind}) is not exported; "
                f"Letta names the metric by the grader key {grader.key!r}"
            )
        warnings += unexported(grader, keep | set(IDENTITY), LABEL)  # identity travels at the suite's top level
        return spec, files

    def _export(self, grader: GraderDefinition) -> ExportResult:
        return self._suite([grader], name=grader.key, suite_file=f"{grader.key}.suite.yaml")

    def export_many(self, graders: Sequence[GraderDefinition]) -> ExportResult:
        ok = [g for g in graders if self.can_export(g).ok]
        result = self._suite(ok, name="grader-studio", suite_file="suite.yaml") if ok else ExportResult()
        result.refused.update({g.key: self.can_export(g).reason for g in graders if g not in ok})
        return result

    def _suite(self, graders: Sequence[GraderDefinition], name: str, suite_file: str) -> ExportResult:
        result = ExportResult()
        entries: JsonObject = {}
        for grader in graders:
            spec, files = self.entry(grader, result.warnings)
            entries[grader.key] = spec
            result.files.update(files)
        suite: JsonObject = {
            "name": name,
            "dataset": "dataset.jsonl",
            "target": {"kind": "letta_code"},
            "graders": entries,
            "reward": {"kind": "metric", "metric_key": graders[0].key},
        }
        carried_fields = {}  # what a grader spec has no field for, at the suite's top level (Letta ignores it)
        for grader in graders:
            fields = identity(grader)
            if (function := adapted(grader, "letta")) is not None:
                fields["adapted"] = adapted_fields(function)
            if fields:
                carried_fields[grader.key] = fields
        if carried_fields:
            suite[META_KEY] = {"graders": carried_fields}
        result.files[suite_file] = dump_yaml(suite)
        result.notes.append(
            f"{suite_file}: put the samples in dataset.jsonl and set the target; the reward is "
            f"{graders[0].key!r}'s score"
        )
        return result

    # ---- import -------------------------------------------------------------------------------

    def detect(self, path: Path) -> bool:
        data = peek_yaml(path)
        return isinstance(data, dict) and isinstance(data.get("graders"), dict) and (
            "target" in data or "dataset" in data
        )

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        data = load_yaml_text(read_text(path), path.name)
        if not isinstance(data, dict) or not isinstance(data.get("graders"), dict):
            raise PlatformError(f"{path.name} is not a Letta suite (no graders: map)")
        result = ImportResult()
        entries = data["graders"]
        meta = data.get(META_KEY)
        given = meta.get("graders") if isinstance(meta, dict) else None
        carried_fields = given if isinstance(given, dict) else {}
        for name, spec in entries.items():
            grader_key = key if key and len(entries) == 1 else str(name)
            kind = spec.get("kind") if isinstance(spec, dict) else type(spec).__name__
            mine = carried_fields.get(str(name))
            try:
                grader = restore_identity(self.from_entry(grader_key, spec, path.parent), mine)
                result.graders.append(unadapted(grader, mine.get("adapted"), self.name) if isinstance(mine, dict)
                                      else grader)
            except (PlatformError, ValueError) as exc:  # ValueError: pydantic validation of the definition
                skip(result, f"graders.{name}", kind, exc)
                continue
            mapped = LETTA_TOOL_FIELDS if kind == "tool" else LETTA_JUDGE_FIELDS
            result.warnings += unmapped(spec, mapped, f"graders.{name} ({kind})")
        if not result.graders:
            raise PlatformError(f"{path.name}: no grader imported ({'; '.join(result.report())})")
        return result

    def from_entry(self, key: str, spec: JsonObject, base: Path) -> GraderDefinition:
        if not isinstance(spec, dict):
            raise PlatformError("grader entry is not a mapping")
        common: JsonObject = {"key": key, "name": spec.get("display_name") or ""}
        if "extractor" in spec:
            common["extractor"] = Extractor(kind=spec["extractor"], config=spec.get("extractor_config") or {})
        kind = spec.get("kind")
        if kind == "tool":
            function = str(spec.get("function", ""))
            if ":" not in function:
                if function not in LETTA_BUILTINS:
                    raise PlatformError(f"unknown built-in tool grader {function!r}")
                return BuiltinGrader(**common, function=function)
            file_ref, fn = function.rsplit(":", 1)
            source = read_text(safe_relative(base, file_ref))
            decorated = grader_functions(source)
            return FunctionGrader(
                **common,
                source=source,
                contract="letta",
                function_name=None if decorated == [fn] else fn,
            )
        if kind in ("model_judge", "rubric"):
            if spec.get("agent_file"):
                raise PlatformError("agent-as-judge graders (agent_file) have no studio equivalent")
            prompt = spec.get("prompt")
            if prompt is None and spec.get("prompt_path"):
                prompt = read_text(safe_relative(base, str(spec["prompt_path"])))
            if prompt is None:
                raise PlatformError("model judge has neither prompt nor prompt_path")
            fields = {k: spec[k] for k in ("temperature", "provider", "max_retries", "timeout") if k in spec}
            return RubricJudge(
                **common,
                **fields,
                prompt=prompt,
                model=spec.get("model"),
                system_prompt=None if spec.get("system_prompt") == RUBRIC_SYSTEM else spec.get("system_prompt"),
            )
        raise PlatformError(f"unknown grader kind {kind!r}")


#: the keys of a suite's grader entry the studio grader holds (the rest is reported on import)
LETTA_TOOL_FIELDS = {"kind", "function", "display_name", "extractor", "extractor_config"}
LETTA_JUDGE_FIELDS = {"kind", "prompt", "prompt_path", "model", "temperature", "provider", "max_retries", "timeout",
                      "system_prompt", "display_name", "extractor", "extractor_config"}

PLATFORM = LettaPlatform()
