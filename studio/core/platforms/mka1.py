"""MKA1: an ``EvalPythonGrader`` declaration, and a task entry that carries the grader's key.

MKA1 graders are Python only, so the studio's function graders written for the MKA1 contracts
export, and binary, range and rubric judges export as ``model_backed`` graders that send the
studio's exact messages through ``ctx.responses_create`` (``_mka1_judge``). The task entry (``id`` =
key) is what makes a round trip keep the key, name and metric; a judge's definition travels in the
task's metadata, so it imports back as the same judge.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from studio.core.json_types import JsonObject, JsonValue
from studio.core.kinds import Carry, GraderKind, get_kind, kind_of
from studio.core.models import (
    BinaryJudge,
    FunctionGrader,
    GraderDefinition,
    Metric,
    RangeJudge,
    RubricJudge,
    dump_grader,
    parse_grader,
)

from . import _mka1_judge as mka1_judge
from ._adapters import adapter_module, function_grader
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._carried import adapted_fields, unadapted
from ._fields import dump_json, peek_json, read_json, slug, unexported
from ._losses import skip

LABEL = "MKA1"
TASK_META = "grader_studio"  # key inside the task's free ``metadata`` for what MKA1 has no field for


def _contract(grader: FunctionGrader) -> JsonObject:
    batch = grader.contract == "mka1_batch"
    if grader.model_access:
        return {
            "contract": "model_backed",
            "execution": "aggregate" if batch else "per_sample",
            "model_access": "mka1",
        }
    return {"contract": "batch" if batch else "sample"}


#: the judges MKA1 carries (as model_backed graders), keyed by kind: what each scores differently
#: there ("" where nothing does)
_JUDGE_NOTES: dict[str, str] = {
    kind_of(BinaryJudge): ("an NA verdict scores 0 in MKA1's mean (the studio leaves the sample out); the "
                           "sample's judge object says skipped"),
    kind_of(RangeJudge): ("where MKA1's model gives no logprobs, the four extra score samples go without a "
                          "seed (the Responses API takes none)"),
    kind_of(RubricJudge): "",
}


class Mka1Platform(Platform):
    name = "mka1"
    label = LABEL
    imports = True

    def no_form(self, kind: GraderKind) -> str:
        return f"a {kind.kind.replace('_', ' ')} grader is not Python"

    def refusal(self, kind: GraderKind, carry: Carry) -> str:
        return (f"{super().refusal(kind, carry)}; MKA1 graders are Python only, and this export writes "
                "function graders and binary, range and rubric judges (as model_backed graders)")

    def _can_export(self, grader: GraderDefinition) -> Support:
        if grader.kind in _JUDGE_NOTES:
            try:  # a model_backed grader sending the studio's messages through ctx.responses_create
                mka1_judge.portable_for_mka1(grader)
            except PlatformError as exc:
                return Support.no(str(exc))
            return Support.yes()
        if function_grader(grader) is None:
            return Support.no(self.no_form(get_kind(grader.kind)))
        # other contracts travel inside a stdlib adapter exposing grade(sample, item)
        return Support.yes()

    def grader_json(self, grader: FunctionGrader, warnings: list[str]) -> JsonObject:
        """The ``EvalPythonGrader`` declaration (defaults written out so the file reads on its own)."""
        timeout = max(1, min(600, math.ceil(grader.timeout_seconds)))
        if timeout != grader.timeout_seconds:
            warnings.append(
                f"{grader.key}: timeout {grader.timeout_seconds} s becomes {timeout} s (MKA1 takes whole seconds)"
            )
        data: JsonObject = {"type": "python", **_contract(grader), "metric_id": grader.metric.key}
        if grader.contract in ("mka1_sample", "mka1_batch"):
            data["source"] = grader.source
        else:
            data["source"] = adapter_module(grader, "mka1")
            warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated "
                            "grade(sample, item) adapter (the question reaches it as one user turn)")
        data["timeout_seconds"] = timeout
        data["max_model_calls"] = grader.max_model_calls
        return data

    def judge_json(self, grader: GraderDefinition, warnings: list[str]) -> JsonObject:
        """A judge as a model_backed ``EvalPythonGrader`` sending the studio's messages (``_mka1_judge``)."""
        judge, auto = mka1_judge.portable_for_mka1(grader)
        if auto:
            warnings.append(f"{grader.key}: it names no model, so the grader asks for model 'auto' (the run's "
                            "judge_model); pass --model (MKA1 spells models provider:model) to fix one")
        if note := _JUDGE_NOTES.get(grader.kind):
            warnings.append(f"{grader.key}: approximated: {note}")
        return {
            "type": "python", "contract": "model_backed", "execution": "per_sample", "model_access": "mka1",
            "metric_id": grader.metric.key, "source": mka1_judge.source(grader, judge),
            "timeout_seconds": mka1_judge.timeout_seconds(judge), "max_model_calls": mka1_judge.max_calls(judge),
        }

    def declaration(self, grader: GraderDefinition, warnings: list[str]) -> JsonObject:
        """The ``EvalPythonGrader`` of any grader ``can_export`` accepted; what it cannot carry goes
        into ``warnings``."""
        function = function_grader(grader)
        if function is None:
            return self.judge_json(grader, warnings)
        declaration = self.grader_json(function, warnings)
        keep = {"name", "description", "metric", "tags", "source", "contract", "model_access",
                "max_model_calls", "timeout_seconds"}
        warnings += unexported(grader, keep, LABEL)
        return declaration

    @staticmethod
    def task(grader: GraderDefinition, declaration: JsonObject) -> JsonObject:
        """The ``EvalTask`` entry (empty dataset): key, name, metric, and in its metadata what MKA1 has
        no field for (a judge's whole definition, so an import gives back the same judge)."""
        metric: JsonObject = {"id": grader.metric.key, "aggregation": "mean", "higher_is_better": True}
        if grader.description:
            metric["description"] = grader.description
        task: JsonObject = {"id": grader.key}
        if grader.name:
            task["name"] = grader.name
        task.update({"type": "custom", "dataset": {}, "metrics": [metric], "grader": declaration})
        extra: JsonObject = {}
        if function_grader(grader) is None:
            extra["judge"] = dump_grader(grader)
        if grader.metric.kind != "scalar":
            extra["metric_kind"] = grader.metric.kind
        if grader.tags:
            extra["tags"] = list(grader.tags)
        if (function := function_grader(grader)) is not None and function.contract not in ("mka1_sample", "mka1_batch"):
            extra["adapted"] = adapted_fields(function)  # import restores it while the adapter is unchanged
        if extra:
            task["metadata"] = {TASK_META: extra}
        return task

    def _export(self, grader: GraderDefinition) -> ExportResult:
        warnings: list[str] = []
        declaration = self.declaration(grader, warnings)
        files = {
            f"{grader.key}.grader.json": dump_json(declaration),
            f"{grader.key}.task.json": dump_json(self.task(grader, declaration)),
        }
        notes = [f"{grader.key}.task.json has an empty dataset: set dataset.file_id before running it on MKA1"]
        if function_grader(grader) is None:
            notes.insert(0, f"{grader.key}: the prompt reads the slots the studio writes on each row (conversation, "
                            "judge_reference, input, ground_truth); a row without them has them read from MKA1's "
                            "item.messages (else the prompt as one user turn) and target, which can differ")
        return ExportResult(files=files, warnings=warnings, notes=notes)

    # ---- import -------------------------------------------------------------------------------

    @staticmethod
    def _is_grader(data: JsonValue) -> bool:
        # OpenAI python graders look alike but carry a name; MKA1 declarations never do
        return (
            isinstance(data, dict) and data.get("type") == "python" and "name" not in data
            and ("source" in data or "file_id" in data)
        )

    def detect(self, path: Path) -> bool:
        data = peek_json(path)
        if self._is_grader(data):
            return True
        if isinstance(data, dict) and self._is_grader(data.get("grader")):
            return True
        return isinstance(data, dict) and isinstance(data.get("tasks"), list)

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        data = read_json(path)
        stem = slug(re.sub(r"\.(grader|task)$", "", path.stem))
        result = ImportResult()
        if self._is_grader(data):
            result.graders.append(self.from_grader(data, key or stem))
        elif isinstance(data, dict) and isinstance(data.get("tasks"), list):
            for n, task in enumerate(data["tasks"], 1):
                try:
                    result.graders.append(self.from_task(task, None))
                except (PlatformError, AttributeError) as exc:
                    where = f"tasks[{n}]" + (f" {task.get('id')!r}" if isinstance(task, dict) and task.get("id") else "")
                    grader = task.get("grader") if isinstance(task, dict) else None
                    skip(result, where, grader.get("type") if isinstance(grader, dict) else "task", exc)
        elif isinstance(data, dict) and self._is_grader(data.get("grader")):
            result.graders.append(self.from_task(data, key or (None if "id" in data else stem)))
        else:
            raise PlatformError(f"{path.name} is not an MKA1 grader, task or suite manifest")
        if not result.graders:
            raise PlatformError(f"{path.name}: no Python grader to import ({'; '.join(result.report())})")
        return result

    def from_task(self, task: JsonObject, key: str | None) -> GraderDefinition:
        if not self._is_grader(task.get("grader")):
            raise PlatformError(f"MKA1 task {task.get('id')!r} has no Python grader")
        key = key or slug(str(task.get("id", "")))
        extra = (task.get("metadata") or {}).get(TASK_META) or {}
        if isinstance(extra, dict) and isinstance(extra.get("judge"), dict):  # a judge the studio exported
            try:
                return parse_grader({**extra["judge"], "key": key})
            except ValueError as exc:
                raise PlatformError(f"the judge definition in the task's metadata is not valid: {exc}") from exc
        grader = self.from_grader(task["grader"], key)
        update: JsonObject = {"name": task.get("name") or ""}
        metrics = task.get("metrics") or []
        mine = next((m for m in metrics if m.get("id") == grader.metric.key), None)
        if mine and mine.get("description"):
            update["description"] = mine["description"]
        if extra.get("tags"):
            update["tags"] = list(extra["tags"])
        if extra.get("metric_kind") in ("scalar", "bool"):
            update["metric"] = Metric(key=grader.metric.key, kind=extra["metric_kind"])
        grader = grader.model_copy(update=update)
        return unadapted(grader, extra.get("adapted"), "mka1")

    @staticmethod
    def from_grader(data: JsonObject, key: str) -> FunctionGrader:
        if "source" not in data:
            raise PlatformError(
                f"MKA1 grader {key!r} refers to uploaded file {data.get('file_id')!r}; "
                "download it and import the JSON with the source inline"
            )
        contract = data.get("contract") or "sample"
        source = data["source"]
        if contract == "model_backed":
            batch = data.get("execution") == "aggregate" or (
                data.get("execution") is None and "def grade_batch" in source and "def grade(" not in source
            )
        else:
            batch = contract == "batch"
        return FunctionGrader(
            key=key,
            source=source,
            contract="mka1_batch" if batch else "mka1_sample",
            model_access=contract == "model_backed" or data.get("model_access") == "mka1",
            metric=Metric(key=data.get("metric_id") or "score"),
            timeout_seconds=float(data.get("timeout_seconds") or 120),
            max_model_calls=int(data.get("max_model_calls", 64)),
        )


PLATFORM = Mka1Platform()
