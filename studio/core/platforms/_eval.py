"""A whole eval for a platform: several graders plus a dataset, written so the result runs as is.

``export_eval(target, graders, samples, name)`` is the one entry point (the CLI's ``export a b c --to T
--dataset D`` and a suite's export call it). Each target gets the dataset in its own form:

* promptfoo: ``promptfooconfig.yaml`` with one test per sample (vars: the judge slots, ``expected``),
  the echo provider answering each test with its stored completion, and every grader's assertion;
* Inspect: ``<name>_dataset.jsonl``, each grader's scorer module, and ``<name>_task.py`` whose task
  reads the dataset, replays the stored completion (no model call) and scores with every grader;
* OpenAI evals: ``<name>.items.jsonl`` (``{"item": ..., "sample": {"output_text": ...}}``) and
  ``<name>.eval.json`` (a custom data source whose item schema lists the fields the testing criteria
  read, and the graders as testing criteria);
* Letta evals: ``suite.yaml`` and ``dataset.jsonl`` (``input``, ``ground_truth``, ``rubric_vars``: what
  Letta's graders and rubric prompts read); Letta's target is an agent, which answers each input;
* MKA1: ``<name>.suite.json`` (an ``EvalSuiteManifest``: one task per grader, judges as model_backed
  graders) and ``<name>.jsonl``, the rows to upload (``prompt``, ``target``, ``messages`` and the judge
  slots); MKA1's run generates the outputs with its models, which the graders then score.

Before writing, every judge whose prompt travels is checked row by row against the studio's own
rendering (``check_rows``): an export that would send a different prompt is refused, never written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from studio.core.json_types import JsonObject, JsonValue
from studio.core.judges.http.providers import get_provider
from studio.core.models import GraderDefinition, Sample

from ._base import ExportResult, PlatformError
from ._fields import dump_json
from ._judge_prompts import (
    PortableJudge,
    check_rows,
    item_fields,
    portable_or_reason,
    with_sections,
)
from .letta import LettaPlatform
from .mka1 import Mka1Platform
from .openai import OpenAIPlatform
from .promptfoo import PromptfooPlatform
from .registry import get_platform, platform_of

TARGETS = ("promptfoo", "inspect", "openai", "letta", "mka1")


@dataclass(frozen=True)
class GeneratedBy:
    """A generated dataset's model under test (its provenance), for an eval that generates as the
    studio did: the endpoint becomes promptfoo's provider / Inspect's model, and each sample's
    ``messages`` (one list of {role, content} a sample, as ``grader-studio generate`` sent them) its
    prompt. Never a key: ``api_key_env`` names the variable that holds one."""

    endpoint: str
    kind: str
    base_url: str
    model: str
    messages: list[list[dict[str, str]]]
    temperature: float | None = None
    max_tokens: int | None = None
    api_key_env: str | None = None

    def promptfoo_provider(self) -> JsonObject:
        config: JsonObject = {"apiBaseUrl": self.base_url}
        if self.temperature is not None:
            config["temperature"] = self.temperature
        if self.max_tokens is not None:
            config["max_tokens"] = self.max_tokens
        if self.api_key_env:
            config["apiKeyEnvar"] = self.api_key_env
        return {"id": f"{get_provider(self.kind).promptfoo_id}:{self.model}", "label": self.endpoint, "config": config}

    def inspect_model(self) -> str:
        """Inspect's model name: ``anthropic/M``, or ``openai-api/<endpoint>/M`` (any OpenAI-compatible
        server, its base URL given to ``get_model``)."""
        if (prefix := get_provider(self.kind).inspect_prefix) is not None:
            return f"{prefix}/{self.model}"
        service = re.sub(r"[^a-z0-9]+", "-", self.endpoint.lower()).strip("-") or "endpoint"
        return f"openai-api/{service}/{self.model}"


def _keyed(graders: Sequence[tuple[str, GraderDefinition]]) -> list[GraderDefinition]:
    out = []
    for key, grader in graders:
        out.append(grader if grader.key == key else grader.model_copy(update={"key": key}))
    if len({g.key for g in out}) != len(out):
        raise PlatformError("two graders of this eval have the same key")
    return out


def _jsonable(value: object) -> JsonValue:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def row(sample: Sample) -> JsonObject:
    """One dataset row every target shares: the sample's own fields, its expected answer as
    ``reference``/``expected``, and the judge slots (which win over a field of the same name)."""
    fields = _jsonable(sample.fields)
    fields = fields if isinstance(fields, dict) else {}
    expected = sample.expected or ""
    return {**fields, "reference": expected, "expected": expected, **item_fields(sample)}


def export_eval(target: str, graders: Sequence[tuple[str, GraderDefinition]], samples: Sequence[Sample],
                name: str, generated: GeneratedBy | None = None) -> ExportResult:
    """Several graders (key, definition) and a dataset as one eval in ``target``'s own format; with
    ``generated`` (promptfoo, Inspect) the eval calls that model for its outputs."""
    if target not in TARGETS:
        raise PlatformError(f"an eval with its dataset is written for {', '.join(TARGETS)}, not {target!r}")
    if not samples:
        raise PlatformError(f"dataset {name!r} has no samples")
    platform = get_platform(target)
    defs = _keyed(graders)
    result = ExportResult()
    ok = []
    for grader in defs:
        support = platform.can_export(grader)
        if not support.ok:
            result.refused[grader.key] = support.reason
            continue
        ok.append(grader)
    if not ok:
        raise PlatformError(f"none of the graders can be expressed for {platform.label}: "
                            + "; ".join(f"{k}: {r}" for k, r in result.refused.items()))
    judges: list[PortableJudge] = []
    for grader in ok:
        exact = portable_or_reason(grader)
        if not isinstance(exact, str):
            check_rows(grader, exact, list(samples))
            judges.append(exact)
    slug = re.sub(r"\W+", "_", name).strip("_") or "eval"
    rows = [row(s) for s in samples]
    if generated is not None and target in ("promptfoo", "inspect"):
        writer = _promptfoo_generating if target == "promptfoo" else _inspect_generating
        result.merge(writer(ok, samples, rows, judges, slug, generated))
        return result
    exporter = {"promptfoo": _promptfoo, "inspect": _inspect, "openai": _openai, "letta": _letta,
                "mka1": _mka1}[target]
    result.merge(exporter(ok, samples, rows, judges, slug))
    return result


def _promptfoo_generating(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
                          judges: list[PortableJudge], slug: str, generated: GeneratedBy) -> ExportResult:
    """The eval calls the model under test: its endpoint is the provider, each test's prompt the
    chat the studio sent (a JSON list of messages, which promptfoo's chat providers read as such),
    and the judges grade the provider's ``output`` (not the stored completion, left out of the vars)."""
    platform = platform_of("promptfoo", PromptfooPlatform)
    tests = [{"description": str(s.id),
              "vars": {**{k: v for k, v in r.items() if isinstance(v, str) and k != "completion"},
                       "chat": json.dumps(messages, ensure_ascii=False)}}
             for s, r, messages in zip(samples, rows, generated.messages, strict=True)]
    config_file = "promptfooconfig.yaml"
    result = platform._config(graders, config_file, tests,
                              provider=("{{ chat | safe }}", generated.promptfoo_provider()))
    result.notes.append(f"{config_file}: the provider is {generated.endpoint!r} (model {generated.model}), which "
                        "generated this dataset; each test sends the sample's chat as the studio did")
    return result


INSPECT_GENERATE = '''

MODEL = {model!r}  # the endpoint that generated this dataset in Grader Studio ({endpoint})
BASE_URL = {base_url!r}
GENERATE_CONFIG = {config!r}


def chat(messages: list[dict[str, str]]) -> list:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {{"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


@task
def {task}_generate() -> Task:
    """Generate the outputs with the model under test (MODEL), then score them with every grader."""
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.solver import generate

    rows = [json.loads(line) for line in (HERE / DATASET).read_text(encoding="utf-8").splitlines() if line.strip()]
    samples = [Sample(id=r["id"], input=chat(r["messages"]), target=r["target"], metadata=r["metadata"])
               for r in rows]
    scorers = [getattr(importlib.import_module(module), fn)() for _, module, fn in SCORERS]
    model = get_model(MODEL, base_url=BASE_URL, config=GenerateConfig(**GENERATE_CONFIG))
    return Task(dataset=MemoryDataset(samples, name={name!r}), solver=generate(), scorer=scorers, model=model)
'''


def _inspect_generating(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
                        judges: list[PortableJudge], slug: str, generated: GeneratedBy) -> ExportResult:
    """The task file gains a second task that generates with the model under test (``generate()``)
    on the chats the studio sent, named after the endpoint; the stored-completion task stays."""
    result = _inspect(graders, samples, rows, judges, slug)
    dataset = f"{slug}_dataset.jsonl"
    lines = []
    for line, messages in zip(result.files[dataset].splitlines(), generated.messages, strict=True):
        data = json.loads(line)
        data["messages"] = messages
        lines.append(json.dumps(data, ensure_ascii=False))
    result.files[dataset] = "\n".join(lines) + "\n"
    config = {k: v for k, v in (("temperature", generated.temperature), ("max_tokens", generated.max_tokens))
              if v is not None}
    file = f"{slug}_task.py"
    result.files[file] += INSPECT_GENERATE.format(model=generated.inspect_model(), endpoint=generated.endpoint,
                                                  base_url=generated.base_url, config=config, task=f"{slug}_eval",
                                                  name=slug)
    result.notes.append(f"{file}: inspect eval {file}@{slug}_eval_generate generates with {generated.inspect_model()} "
                        f"(the endpoint {generated.endpoint!r} that generated this dataset), then scores")
    return result


def _promptfoo(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
               judges: list[PortableJudge], slug: str) -> ExportResult:
    from ._promptfoo_judge import completion_var

    platform = platform_of("promptfoo", PromptfooPlatform)
    tests = [{"description": str(s.id), "vars": {k: v for k, v in r.items() if isinstance(v, str)}}
             for s, r in zip(samples, rows, strict=True)]
    with completion_var("completion"):
        return platform._config(graders, "promptfooconfig.yaml", tests)


TASK = '''"""Inspect AI eval exported by Grader Studio: dataset {name!r} scored by {keys}.

Run it as is: ``inspect eval {file} --model mockllm/model`` (the solver replays each sample's stored
completion, so the evaluated model is never called; judges call the model bound to the 'grader'
role, ``--model-role grader=...``, else their own). Replace the solver to grade fresh answers.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, TaskState, solver

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
DATASET = {dataset!r}
SCORERS = {scorers!r}  # (grader key, module, scorer function)


def dataset() -> MemoryDataset:
    rows = [json.loads(line) for line in (HERE / DATASET).read_text(encoding="utf-8").splitlines() if line.strip()]
    return MemoryDataset([Sample(id=r["id"], input=r["input"], target=r["target"], metadata=r["metadata"])
                          for r in rows], name={name!r})


@solver
def stored_completion():
    """The sample's stored completion as the model's output (no model call)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content(model="stored", content=state.metadata["completion"])
        state.messages.append(state.output.message)
        return state

    return solve


@task
def {task}() -> Task:
    scorers = [getattr(importlib.import_module(module), fn)() for _, module, fn in SCORERS]
    return Task(dataset=dataset(), solver=stored_completion(), scorer=scorers)
'''


def _inspect(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
             judges: list[PortableJudge], slug: str) -> ExportResult:
    platform = get_platform("inspect")
    result = ExportResult()
    scorers = []
    for grader in graders:
        part = platform.export(grader)
        module = next(p for p in part.files if p.endswith("_inspect.py"))
        fn = module.removesuffix("_inspect.py")
        scorers.append((grader.key, module.removesuffix(".py"), fn))
        result.merge(part)
    dataset = f"{slug}_dataset.jsonl"
    lines = []
    for sample, r in zip(samples, rows, strict=True):
        lines.append(json.dumps({"id": str(sample.id), "input": sample.input_text() or "(no input)",
                                 "target": sample.expected or "", "metadata": r}, ensure_ascii=False))
    result.files[dataset] = "\n".join(lines) + "\n"
    file = f"{slug}_task.py"
    result.files[file] = TASK.format(name=slug, keys=", ".join(k for k, _, _ in scorers), file=file,
                                     dataset=dataset, scorers=scorers, task=f"{slug}_eval")
    result.notes.append(f"{file}: inspect eval {file} --model mockllm/model runs it on the stored completions")
    return result


def _openai(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
            judges: list[PortableJudge], slug: str) -> ExportResult:
    platform = platform_of("openai", OpenAIPlatform)
    result = ExportResult()
    criteria = [platform.to_json(g, result.warnings) for g in graders]
    items = [with_sections(judges, r) for r in rows]
    names = sorted({k for item in items for k, v in item.items() if isinstance(v, str)})
    item_schema = {"type": "object", "properties": {k: {"type": "string"} for k in names}, "required": names}
    lines = []
    for sample, item in zip(samples, items, strict=True):
        strings = {k: item.get(k, "") for k in names}
        lines.append(json.dumps({"item": strings, "sample": {"output_text": sample.completion or ""}},
                                ensure_ascii=False))
    result.files[f"{slug}.items.jsonl"] = "\n".join(lines) + "\n"
    result.files[f"{slug}.eval.json"] = dump_json({
        "name": slug,
        "data_source_config": {"type": "custom", "item_schema": item_schema, "include_sample_schema": True},
        "testing_criteria": criteria,
    })
    result.notes.append(f"{slug}.eval.json: create the eval, upload {slug}.items.jsonl (purpose evals) and start "
                        "a run whose data source is that file (type jsonl); each line carries the stored output "
                        "as sample.output_text")
    return result


def _letta(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
           judges: list[PortableJudge], slug: str) -> ExportResult:
    platform = platform_of("letta", LettaPlatform)
    result = platform._suite(graders, name=slug, suite_file="suite.yaml")
    lines = []
    for sample, r in zip(samples, rows, strict=True):
        line: JsonObject = {"id": str(sample.id), "input": r["input"], "ground_truth": sample.expected or ""}
        rubric_vars = {k.removeprefix("var_"): v for k, v in r.items() if k.startswith("var_")}
        if rubric_vars:
            line["rubric_vars"] = rubric_vars
        lines.append(json.dumps(line, ensure_ascii=False))
    result.files["dataset.jsonl"] = "\n".join(lines) + "\n"
    result.notes = [n for n in result.notes if "put the samples in dataset.jsonl" not in n]
    result.notes.append("suite.yaml: dataset.jsonl holds every sample's input and ground truth; set the target "
                        "(the agent that answers them): Letta grades the agent's answers, not stored completions")
    return result


def _mka1(graders: list[GraderDefinition], samples: Sequence[Sample], rows: list[JsonObject],
          judges: list[PortableJudge], slug: str) -> ExportResult:
    """A suite manifest whose tasks read ``<slug>.jsonl``: MKA1's own keys (prompt, target, the turns as
    ``messages``), the row's fields, and the judge slots, so an exported judge reads exactly what the
    studio's prompt shows."""
    platform = platform_of("mka1", Mka1Platform)
    result = ExportResult()
    tasks = []
    for grader in graders:  # the declarations and tasks alone: the rows here carry the slots and the dataset
        task = platform.task(grader, platform.declaration(grader, result.warnings))
        task["dataset"] = {"source": "file", "format": "jsonl", "name": f"{slug}.jsonl"}
        tasks.append(task)
    lines = []
    for sample, r in zip(samples, rows, strict=True):
        line: JsonObject = {"id": str(sample.id), "prompt": sample.input_text(), "target": sample.expected or "",
                                "messages": [{"role": t.role, "content": t.content} for t in sample.messages]}
        line.update(r)  # the row's own fields, then the slots, win
        lines.append(json.dumps(line, ensure_ascii=False))
    result.files[f"{slug}.jsonl"] = "\n".join(lines) + "\n"
    result.files[f"{slug}.suite.json"] = dump_json({"tasks": tasks, "metadata": {"grader_studio": {"dataset": slug}}})
    result.notes.append(f"{slug}.suite.json: upload {slug}.jsonl (purpose evals) and set each task's dataset.file_id; "
                        "MKA1's run generates the outputs with the run's models and the graders score them (the "
                        "stored completions are in the rows as 'completion', not replayed)")
    return result
