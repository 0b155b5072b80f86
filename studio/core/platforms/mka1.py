"""MKA1: an ``EvalPythonGrader`` declaration, and a task entry that carries the grader's key.

MKA1 graders are Python only, so the studio's function graders written for the MKA1 contracts
export; the task entry (``id`` = key) is what makes a round trip keep the key, name and metric.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from studio.core.models import FunctionGrader, GraderDefinition, JuryGrader, Metric

from ._adapters import adapter_module
from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._fields import dump_json, peek_json, read_json, slug, unexported
from ._jury import jury_refusal
from ._losses import skip

LABEL = "MKA1"
TASK_META = "grader_studio"  # key inside the task's free ``metadata`` for what MKA1 has no field for


def _contract(grader: FunctionGrader) -> dict[str, Any]:
    batch = grader.contract == "mka1_batch"
    if grader.model_access:
        return {
            "contract": "model_backed",
            "execution": "aggregate" if batch else "per_sample",
            "model_access": "mka1",
        }
    return {"contract": "batch" if batch else "sample"}


class Mka1Platform(Platform):
    name = "mka1"
    label = LABEL
    imports = True

    def can_export(self, grader: GraderDefinition) -> Support:
        if isinstance(grader, JuryGrader):
            return Support.no(jury_refusal(LABEL))
        if not isinstance(grader, FunctionGrader):
            return Support.no(
                "MKA1 graders are Python only; a judge must be rewritten as a model_backed grader "
                "calling ctx.responses_create, which this export does not write yet (Inspect and promptfoo "
                "carry binary, range and rubric judges exactly)"
            )
        # other contracts travel inside a stdlib adapter exposing grade(sample, item)
        return Support.yes()

    def grader_json(self, grader: FunctionGrader, warnings: list[str]) -> dict[str, Any]:
        """The ``EvalPythonGrader`` declaration (defaults written out so the file reads on its own)."""
        timeout = max(1, min(600, math.ceil(grader.timeout_seconds)))
        if timeout != grader.timeout_seconds:
            warnings.append(
                f"{grader.key}: timeout {grader.timeout_seconds} s becomes {timeout} s (MKA1 takes whole seconds)"
            )
        data: dict[str, Any] = {"type": "python", **_contract(grader), "metric_id": grader.metric.key}
        if grader.contract in ("mka1_sample", "mka1_batch"):
            data["source"] = grader.source
        else:
            data["source"] = adapter_module(grader, "mka1")
            warnings.append(f"{grader.key}: its {grader.contract} source runs inside a generated "
                            "grade(sample, item) adapter (the question reaches it as one user turn)")
        data["timeout_seconds"] = timeout
        data["max_model_calls"] = grader.max_model_calls
        return data

    def _export(self, grader: GraderDefinition) -> ExportResult:
        assert isinstance(grader, FunctionGrader)
        warnings: list[str] = []
        declaration = self.grader_json(grader, warnings)
        keep = {"name", "description", "metric", "tags", "source", "contract", "model_access",
                "max_model_calls", "timeout_seconds"}
        warnings += unexported(grader, keep, LABEL)
        metric: dict[str, Any] = {"id": grader.metric.key, "aggregation": "mean", "higher_is_better": True}
        if grader.description:
            metric["description"] = grader.description
        task: dict[str, Any] = {"id": grader.key}
        if grader.name:
            task["name"] = grader.name
        task.update({"type": "custom", "dataset": {}, "metrics": [metric], "grader": declaration})
        extra: dict[str, Any] = {}
        if grader.metric.kind != "scalar":
            extra["metric_kind"] = grader.metric.kind
        if grader.tags:
            extra["tags"] = list(grader.tags)
        if extra:
            task["metadata"] = {TASK_META: extra}
        files = {
            f"{grader.key}.grader.json": dump_json(declaration),
            f"{grader.key}.task.json": dump_json(task),
        }
        note = f"{grader.key}.task.json has an empty dataset: set dataset.file_id before running it on MKA1"
        return ExportResult(files=files, warnings=warnings, notes=[note])

    # ---- import -------------------------------------------------------------------------------

    @staticmethod
    def _is_grader(data: Any) -> bool:
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

    def from_task(self, task: dict[str, Any], key: str | None) -> FunctionGrader:
        if not self._is_grader(task.get("grader")):
            raise PlatformError(f"MKA1 task {task.get('id')!r} has no Python grader")
        grader = self.from_grader(task["grader"], key or slug(str(task.get("id", ""))))
        update: dict[str, Any] = {"name": task.get("name") or ""}
        metrics = task.get("metrics") or []
        mine = next((m for m in metrics if m.get("id") == grader.metric.key), None)
        if mine and mine.get("description"):
            update["description"] = mine["description"]
        extra = (task.get("metadata") or {}).get(TASK_META) or {}
        if extra.get("tags"):
            update["tags"] = list(extra["tags"])
        if extra.get("metric_kind") in ("scalar", "bool"):
            update["metric"] = Metric(key=grader.metric.key, kind=extra["metric_kind"])
        return grader.model_copy(update=update)

    @staticmethod
    def from_grader(data: dict[str, Any], key: str) -> FunctionGrader:
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
