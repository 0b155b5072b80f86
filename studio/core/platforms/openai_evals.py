"""An OpenAI eval read whole: its testing criteria as graders, its name for a suite, its items as rows.

OpenAI's Evals platform closed in November 2026; teams hold their evals as the API returned them
or as they wrote them. Five shapes are read (``read_eval``): an eval object (``"object": "eval"``),
a create-eval request body (``name``, ``data_source_config``, ``testing_criteria``), a bare list of
testing criteria, a single grader, and a fine-tuning grader config (``{"grader": ...}`` of the
graders' run/validate calls, a reinforcement method or a job's ``method``).

Each criterion becomes one grader: a studio grader when the studio's own kind holds it exactly (it
exports back to the same JSON: an eval the studio exported comes back as the graders it was), else
an ``openai_grader`` holding the criterion verbatim and run with OpenAI's rules. A malformed
criterion is refused with the first bad field and its path (``testing_criteria[2].input[0].content``);
what is read but has no effect here (an unknown field, sampling parameters the endpoints do not
take, an image) is named with its path in ``not_carried``: the import says so and exits 3.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import GraderDefinition, Sample
from studio.core.models.function import MAX_SOURCE_BYTES
from studio.core.models.openai_grader import OPENAI_TYPES, PYTHON_SOURCE_LIMIT, OpenAIGrader

from ._base import PlatformError, Support
from ._fields import read_json, read_text, slug

if TYPE_CHECKING:
    from studio.core.models.suite import SuiteDefinition
    from studio.core.store.library import Library

OPERATIONS = ("eq", "ne", "like", "ilike")
METRICS = ("cosine", "fuzzy_match", "bleu", "gleu", "meteor", "rouge_1", "rouge_2", "rouge_3", "rouge_4",
           "rouge_5", "rouge_l")
ROLES = ("user", "assistant", "system", "developer")
#: each type's fields (openai.types.graders and eval_create_params): required, then optional
FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "string_check": ({"type", "name", "input", "reference", "operation"}, set()),
    "text_similarity": ({"type", "name", "input", "reference", "evaluation_metric"}, {"pass_threshold"}),
    "score_model": ({"type", "name", "model", "input"}, {"range", "sampling_params", "pass_threshold"}),
    "label_model": ({"type", "name", "model", "input", "labels", "passing_labels"}, set()),
    "python": ({"type", "name", "source"}, {"image_tag", "pass_threshold"}),
    "multi": ({"type", "name", "graders", "calculate_output"}, set()),
}
SAMPLING = {"temperature", "max_completions_tokens", "seed", "top_p", "reasoning_effort"}
EVAL_FIELDS = {"object", "id", "name", "data_source_config", "testing_criteria", "metadata", "created_at"}
#: columns a plain item row may store the model's output in (read as sample.output_text / output_json)
OUTPUT_COLUMNS = ("output_text", "output_json", "output", "completion", "response")


#: a fine-tuning job's body (``fine_tuning.jobs.create``), whose ``method`` may hold a grader
JOB_FIELDS = {"model", "training_file", "validation_file", "method", "suffix", "seed", "hyperparameters",
              "integrations", "metadata"}
#: the graders' run/validate calls and a reinforcement method's settings, around one ``grader``
GRADER_CALL_FIELDS = {"grader", "model_sample", "item", "hyperparameters"}


class MalformedEval(PlatformError):
    """The first field of the file that is not OpenAI's shape, with its path."""


#: where an eval's criteria go back in its envelope (``EvalFile.origin``)
CRITERIA_SLOT = "testing_criteria"


@dataclass
class EvalFile:
    """What an OpenAI eval file holds, read: its name, its criteria (with their paths), and what the
    studio reads but cannot carry; ``envelope`` is an eval's other fields, in their order."""

    name: str
    criteria: list[tuple[str, JsonObject]]
    not_carried: list[str] = field(default_factory=list)
    shape: str = ""
    envelope: JsonObject | None = None

    def origin(self) -> str | None:
        """The eval as JSON text with its criteria left out (a suite's ``origin``): ``[]`` for a bare
        list of criteria, None for the shapes that are one grader."""
        if self.shape == "a list of testing criteria":
            return "[]"
        if self.envelope is None:
            return None
        return json.dumps({k: (None if k == CRITERIA_SLOT else v) for k, v in self.envelope.items()},
                          ensure_ascii=False)


def eval_text(origin: str, criteria: list[JsonObject]) -> str:
    """An eval file written back: its envelope with the criteria in their place, in the layout the
    studio writes JSON (two-space indent, UTF-8 as is, a final line break). An eval written in that
    layout comes back byte for byte."""
    from ._fields import dump_json

    envelope = json.loads(origin)
    if isinstance(envelope, list):  # a bare list of criteria
        return dump_json(criteria)
    return dump_json({k: (criteria if k == CRITERIA_SLOT else v) for k, v in envelope.items()})


def _bad(path: str, what: str) -> MalformedEval:
    return MalformedEval(f"{path}: {what}")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _string(data: JsonObject, key: str, path: str) -> None:
    if not isinstance(data.get(key), str):
        raise _bad(f"{path}.{key}", f"must be a string, not {type(data.get(key)).__name__}")


def check_criterion(data: JsonValue, path: str, lost: list[str], *, top: bool = True) -> None:
    """Refuse the first malformed field of one grader (``MalformedEval`` with its path); list what is
    read but not carried in ``lost``."""
    if not isinstance(data, dict):
        raise _bad(path, f"a grader must be a JSON object, not {type(data).__name__}")
    kind = data.get("type")
    if kind not in OPENAI_TYPES:
        raise _bad(f"{path}.type", f"{kind!r} is not an OpenAI grader type ({', '.join(OPENAI_TYPES)})")
    required, optional = FIELDS[kind]
    if kind == "text_similarity" and top and "pass_threshold" not in data:
        pass  # a fine-tuning grader has none; an eval's criterion should, and scores without one
    for key in sorted(required):
        if key not in data:
            raise _bad(f"{path}.{key}", f"missing (a {kind} grader needs {', '.join(sorted(required))})")
    for key in ("name", "input", "reference", "source", "model", "calculate_output", "image_tag"):
        if key in data and not (key == "input" and kind in ("score_model", "label_model")):
            _string(data, key, path)
    for key in sorted(set(data) - required - optional):
        lost.append(f"{path}.{key}: not a field of OpenAI's {kind} grader; kept, but it has no effect here")
    if "pass_threshold" in data and not _number(data["pass_threshold"]):
        raise _bad(f"{path}.pass_threshold", "must be a number")
    if kind == "string_check" and data["operation"] not in OPERATIONS:
        raise _bad(f"{path}.operation", f"{data['operation']!r} is not one of {', '.join(OPERATIONS)}")
    if kind == "text_similarity" and data["evaluation_metric"] not in METRICS:
        raise _bad(f"{path}.evaluation_metric", f"{data['evaluation_metric']!r} is not one of {', '.join(METRICS)}")
    if kind in ("score_model", "label_model"):
        _messages(data["input"], f"{path}.input", lost)
    if kind == "score_model":
        _score_model(data, path, lost)
    if kind == "label_model":
        for key in ("labels", "passing_labels"):
            if not isinstance(data[key], list) or not all(isinstance(v, str) for v in data[key]) or not data[key]:
                raise _bad(f"{path}.{key}", "must be a non-empty list of strings")
        stray = [v for v in data["passing_labels"] if v not in data["labels"]]
        if stray:
            raise _bad(f"{path}.passing_labels", f"{stray} are not among the labels {data['labels']}")
    if kind == "python":
        size = len(data["source"].encode("utf-8"))
        if size >= PYTHON_SOURCE_LIMIT:
            raise _bad(f"{path}.source", f"is {size:,} bytes; OpenAI's limit is {PYTHON_SOURCE_LIMIT // 1024} kB")
        if size > MAX_SOURCE_BYTES:
            lost.append(f"{path}.source: {size:,} bytes is within OpenAI's 256 kB but over the studio sandbox's "
                        f"{MAX_SOURCE_BYTES // 1024} KiB; it will not run here")
    if kind == "multi":
        _multi(data, path, lost)


def _score_model(data: JsonObject, path: str, lost: list[str]) -> None:
    rng = data.get("range")
    if rng is not None and not (isinstance(rng, list) and len(rng) == 2 and all(_number(v) for v in rng)
                                and rng[0] < rng[1]):
        raise _bad(f"{path}.range", "must be two numbers, low then high")
    params = data.get("sampling_params")
    if params is None:
        return
    if not isinstance(params, dict):
        raise _bad(f"{path}.sampling_params", "must be an object")
    for key, value in params.items():
        if key not in SAMPLING:
            lost.append(f"{path}.sampling_params.{key}: not one of OpenAI's sampling parameters; no effect here")
        elif key == "reasoning_effort":
            if value is not None and not isinstance(value, str):
                raise _bad(f"{path}.sampling_params.{key}", "must be a string (none, minimal, low, medium, high ...)")
        elif value is not None and not _number(value):
            raise _bad(f"{path}.sampling_params.{key}", "must be a number")


def _messages(messages: JsonValue, path: str, lost: list[str]) -> None:
    if not isinstance(messages, list) or not messages:
        raise _bad(path, "must be a non-empty list of messages")
    for n, message in enumerate(messages):
        where = f"{path}[{n}]"
        if not isinstance(message, dict):
            raise _bad(where, "a message must be an object with role and content")
        if message.get("role") not in ROLES:
            raise _bad(f"{where}.role", f"{message.get('role')!r} is not one of {', '.join(ROLES)}")
        if "content" not in message:
            raise _bad(f"{where}.content", "missing")
        content = message["content"]
        parts = content if isinstance(content, list) else [content]
        for k, part in enumerate(parts):
            at = f"{where}.content" + (f"[{k}]" if isinstance(content, list) else "")
            if isinstance(part, str):
                continue
            if not isinstance(part, dict):
                raise _bad(at, f"must be text or a content object, not {type(part).__name__}")
            kind = part.get("type")
            if kind in ("input_text", "output_text"):
                if not isinstance(part.get("text"), str):
                    raise _bad(f"{at}.text", "must be a string")
            elif kind in ("input_image", "input_audio"):
                lost.append(f"{at}: {kind} is kept, but the studio's endpoints take text only: this grader "
                            "is refused when it runs")
            else:
                raise _bad(f"{at}.type", f"{kind!r} is not input_text, output_text, input_image or input_audio")
        for key in sorted(set(message) - {"role", "content", "type"}):
            lost.append(f"{where}.{key}: not a field of a message; no effect here")


def _multi(data: JsonObject, path: str, lost: list[str]) -> None:
    from studio.core.graders import openai_formula

    graders = data["graders"]
    if isinstance(graders, dict) and "type" in graders:
        graders = {graders.get("name", "grader"): graders}
    if not isinstance(graders, dict) or not graders:
        raise _bad(f"{path}.graders", "must be a map of name -> grader")
    for name, sub in graders.items():
        check_criterion(sub, f"{path}.graders.{name}", lost, top=False)
    try:
        openai_formula.parse(data["calculate_output"], set(graders))
    except openai_formula.FormulaError as exc:
        raise _bad(f"{path}.calculate_output", str(exc)) from None


def _criteria(items: JsonValue, path: str, lost: list[str]) -> list[tuple[str, JsonObject]]:
    if not isinstance(items, list):
        raise _bad(path, "must be a list of graders")
    if not items:
        raise _bad(path, "holds no grader")
    out = []
    for n, item in enumerate(items):
        where = f"{path}[{n}]"
        if isinstance(item, dict) and item.get("type") == "endpoint":
            lost.append(f"{where}: an endpoint grader calls a service of OpenAI's that the studio cannot reach "
                        "and has no documented request shape; not imported (the other criteria are)")
            continue
        check_criterion(item, where, lost)
        out.append((where, item))
    if not out:
        raise _bad(path, "holds no grader the studio can run")
    return out


def read_eval(data: JsonValue, stem: str) -> EvalFile:
    """Any of the five shapes, checked; ``stem`` names an eval that has no name of its own."""
    lost: list[str] = []
    if isinstance(data, list):
        return EvalFile(stem, _criteria(data, "testing_criteria", lost), lost, "a list of testing criteria")
    if not isinstance(data, dict):
        raise _bad("(the file)", f"an OpenAI eval is a JSON object or list, not {type(data).__name__}")
    if "testing_criteria" in data:
        shape = "an eval object" if data.get("object") == "eval" else "a create-eval request"
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise _bad("name", "must be a string")
        for key in sorted(set(data) - EVAL_FIELDS):
            lost.append(f"{key}: not a field of an OpenAI eval; kept for the export, no effect here")
        if data.get("metadata"):
            lost.append("metadata: the eval's metadata has no effect here (kept for the export)")
        source = data.get("data_source_config")
        if isinstance(source, dict) and source.get("type") not in (None, "custom"):
            lost.append(f"data_source_config.type: {source.get('type')!r} reads OpenAI's stored logs; give the rows "
                        "with --items")
        return EvalFile(name or stem, _criteria(data["testing_criteria"], "testing_criteria", lost), lost, shape,
                        envelope=data)
    if "type" in data and data.get("type") in OPENAI_TYPES:
        check_criterion(data, "grader", lost)
        return EvalFile(stem, [("grader", data)], lost, "a single grader")
    for path, grader, extra in _fine_tuning(data):
        check_criterion(grader, path, lost, top=False)
        for key in extra:
            lost.append(f"{key}: part of the fine-tuning config, not of the grader; not imported")
        return EvalFile(stem, [(path, grader)], lost, "a fine-tuning grader config")
    if "type" in data:
        raise _bad("type", f"{data['type']!r} is not an OpenAI grader type ({', '.join(OPENAI_TYPES)})")
    raise _bad("(the file)", "not an OpenAI eval: no testing_criteria, grader or type field")


def _fine_tuning(data: JsonObject) -> list[tuple[str, JsonValue, list[str]]]:
    """The grader of a fine-tuning config: ``{grader, model_sample?, item?}`` (graders' run/validate),
    a reinforcement method ``{type: reinforcement, reinforcement: {grader, hyperparameters}}``, its
    inner ``{grader, hyperparameters}``, or a job body whose ``method`` is one."""
    if isinstance(data.get("method"), dict) and set(data) <= JOB_FIELDS:
        found = _fine_tuning(data["method"])
        return [(f"method.{p}", g, [f"method.{e}" for e in extra]) for p, g, extra in found]
    if data.get("type") == "reinforcement" and isinstance(data.get("reinforcement"), dict):
        found = _fine_tuning(data["reinforcement"])
        return [(f"reinforcement.{p}", g, [f"reinforcement.{e}" for e in extra]) for p, g, extra in found]
    if "grader" in data and set(data) <= GRADER_CALL_FIELDS:
        return [("grader", data["grader"], sorted(k for k in data if k != "grader"))]
    return []


class _OpenAIJson(Protocol):
    """What a criterion's import reads of the openai platform (``openai.OpenAIPlatform``)."""

    def from_json(self, data: JsonObject, key: str | None = None) -> GraderDefinition: ...

    def can_export(self, grader: GraderDefinition) -> Support: ...

    def to_json(self, grader: GraderDefinition, warnings: list[str]) -> JsonObject: ...


def grader_for(criterion: JsonObject, key: str) -> GraderDefinition:
    """The studio grader of one criterion: a studio kind when it holds the criterion exactly (it
    exports back to the same JSON), else the criterion itself as an ``openai_grader``."""
    from .registry import get_platform

    # the registry's "openai" is openai.py's OpenAIPlatform (which imports this module)
    platform = cast(_OpenAIJson, get_platform("openai"))
    try:
        mapped = platform.from_json(criterion, key)
        if platform.can_export(mapped).ok and platform.to_json(mapped, []) == criterion:
            return mapped
    except (PlatformError, ValueError, KeyError, TypeError):
        pass
    return OpenAIGrader(key=key, name=str(criterion.get("name", "")), criterion=criterion,
                        as_written=json.dumps(criterion, ensure_ascii=False))


def unique_keys(names: list[str]) -> list[str]:
    keys: list[str] = []
    for name in names:
        base = slug(name, "criterion")
        key, n = base, 2
        while key in keys:
            key, n = f"{base}-{n}", n + 1
        keys.append(key)
    return keys


# ---- items ----------------------------------------------------------------------------------------


def item_row(line: JsonValue, where: str) -> JsonObject:
    """One items line as OpenAI's run data source holds it: ``{"item": ..., "sample": ...}``. A plain
    row is the item itself; its stored output column, when it has one, becomes the sample's
    ``output_text`` (and ``output_json`` when it is JSON), the column staying in the item."""
    if not isinstance(line, dict):
        raise _bad(where, f"an item must be a JSON object, not {type(line).__name__}")
    if isinstance(line.get("item"), dict):
        sample = line.get("sample")
        if sample is not None and not isinstance(sample, dict):
            raise _bad(f"{where}.sample", "must be an object")
        return line
    if "item" in line:
        raise _bad(f"{where}.item", "must be an object")
    row: JsonObject = {"item": line}
    column = next((c for c in OUTPUT_COLUMNS if c in line), None)
    if column is not None:
        value = line[column]
        if isinstance(value, str):
            row["sample"] = {"output_text": value}
        else:
            row["sample"] = {"output_text": json.dumps(value, ensure_ascii=False), "output_json": value}
    return row


def read_items(path: Path) -> list[Sample]:
    """The rows of an items JSONL file as samples (OpenAI's row shape, every field kept)."""
    from studio.core.datasets.shapes import RowError, row_to_sample

    samples = []
    for n, text in enumerate(read_text(path).splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PlatformError(f"{path}:{n}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        try:
            samples.append(row_to_sample(item_row(line, f"{path.name}:{n}"), "openai", str(n)))
        except RowError as exc:
            raise PlatformError(f"{path}:{n}: {exc}") from None
    if not samples:
        raise PlatformError(f"{path}: no items")
    return samples


def load(path: Path) -> EvalFile:
    """The eval file read and checked; a malformed one is refused with the file's name and the path
    of its first bad field."""
    try:
        return read_eval(read_json(path), path.name.split(".")[0] or "eval")
    except MalformedEval as exc:
        raise MalformedEval(f"{path.name}: {exc}") from None


def looks_like(data: JsonValue) -> bool:
    """Whether parsed JSON is meant as an OpenAI eval in one of the five shapes (detection only)."""
    if isinstance(data, list):
        types = [i.get("type") if isinstance(i, dict) else None for i in data]
        return any(t in OPENAI_TYPES for t in types) and all(t in OPENAI_TYPES or t == "endpoint" for t in types)
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("testing_criteria"), list):
        return "data_source_config" in data or data.get("object") == "eval"
    if data.get("type") in OPENAI_TYPES and "name" in data:
        return True
    return any(isinstance(g, dict) and g.get("type") in OPENAI_TYPES for _, g, _ in _fine_tuning(data))


# ---- the eval made runnable: a suite and a dataset ----------------------------------------------------

#: the shapes that hold one grader, not an eval (a suite is made of them only with items)
ONE_GRADER = ("a single grader", "a fine-tuning grader config")
#: OpenAI types whose result is pass/fail: a sample passes when it scores 1.0
PASS_FAIL = ("string_check", "label_model")


def member_threshold(grader: GraderDefinition) -> float | None:
    """The suite threshold that makes a member pass where OpenAI's criterion passed: 1.0 for the
    pass/fail types, the criterion's ``pass_threshold`` for the others (None: the run's)."""
    if not isinstance(grader, OpenAIGrader):
        return None
    if grader.openai_type in PASS_FAIL:
        return 1.0
    return grader.pass_threshold


def suite_for(read: EvalFile, graders: list[GraderDefinition]) -> SuiteDefinition:
    from studio.core.models.suite import SuiteDefinition, SuiteMember

    members = [SuiteMember(grader=g.key, threshold=member_threshold(g)) for g in graders]
    return SuiteDefinition(key=slug(read.name, "openai-eval"), name=read.name, graders=members,
                           description="imported from an OpenAI eval", origin=read.origin())


def make_runnable(library: Library, read: EvalFile, graders: list[GraderDefinition], samples: list[Sample] | None,
                  source: str, items_source: str = "") -> tuple[dict[str, str], dict[str, str]]:
    """After the graders are in: the suite named after the eval (a new version when it exists) and,
    given the items, a dataset of the same name. Returns (what was made, what was refused: a
    sentence each), for the CLI's ``import`` and the window's File > Import alike."""
    from studio.core.store import LibraryError

    made: dict[str, str] = {}
    refused: dict[str, str] = {}
    if read.shape in ONE_GRADER and samples is None:
        return made, refused  # one grader is not an eval: no suite of one
    suite = suite_for(read, graders)
    try:
        if library.suites.exists(suite.key):
            existing = library.suites.get(suite.key).definition
            if existing.origin is None and existing.description != suite.description:
                refused[f"suite {suite.key}"] = (f"the library has a suite {suite.key!r} that was not imported from an "
                                                 "OpenAI eval; rename one of them (the graders are imported)")
                return made, refused
            library.suites.save(suite, message=f"imported again from {source}")
        else:
            library.suites.create(suite, message=f"imported from OpenAI eval {source}")
        made["suite"] = suite.key
    except LibraryError as exc:
        refused[f"suite {suite.key}"] = str(exc)
    if samples is not None:
        try:
            made["dataset"] = library.datasets.create(suite.key, samples, format="openai", source=items_source).name
        except LibraryError as exc:
            refused[f"dataset {suite.key}"] = str(exc)
    return made, refused


def sibling_items(path: Path) -> Path | None:
    """The items file beside an eval file, as the studio's export names it (``NAME.eval.json`` ->
    ``NAME.items.jsonl``): what the window's import reads without asking."""
    stem = path.name.split(".")[0]
    found = path.with_name(f"{stem}.items.jsonl")
    return found if found.is_file() else None
