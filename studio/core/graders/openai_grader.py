"""OpenAI graders run here with OpenAI's rules (the kind ``openai_grader``): string_check,
text_similarity, score_model, label_model, python and multi, as an imported eval's testing criteria.

Each rule and its source is in docs/openai.md. In short:

* templates: ``{{ item.x }}``, ``{{ sample.output_text }}``, ``{{ sample.output_json.a.b }}`` and list
  indexes are filled in from the row as OpenAI passes it to a python grader (``sandbox/payloads``:
  ``item`` is the row's item, ``sample`` its sample with ``output_json`` parsed); a string is written as
  it is, anything else as JSON; a field the row lacks is that sample's error (never an empty string);
* string_check compares without trimming: eq, ne, like (contains), ilike (contains, any case): 1 or 0;
* text_similarity scores with ``similarity`` (cosine through the endpoint's embeddings);
* score_model and label_model send the rendered messages to the endpoint and read a JSON answer
  (``{"result": ...}``) asked for with a JSON schema; a score outside ``range`` or a label not in
  ``labels`` is an error, not a clamp;
* python runs ``grade(sample, item)`` unchanged in the sandbox (``mka1_sample`` contract), with
  OpenAI's 2-minute and 2 GB limits and the packages of OpenAI's image (read-only, in workers of
  their own); its ``image_tag`` is recorded in each result's details;
* multi scores its graders and computes ``calculate_output`` with ``openai_formula``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a cosine criterion loads the judges
    from studio.core.judges.http.client import JudgeClient

from studio.core.json_types import JsonArray, JsonObject, JsonValue
from studio.core.kinds import NATIVE, Kind, refused
from studio.core.models import FunctionGrader, Outcome, Sample
from studio.core.models.openai_grader import (
    PYTHON_IMAGE_PACKAGES,
    PYTHON_MEMORY_MB,
    PYTHON_SECONDS,
    OpenAIGrader,
    multi_parts,
)
from studio.core.models.pass_rule import reaches
from studio.core.sandbox import payloads
from studio.core.scoring import GradingContext, ScorerBase

from . import openai_formula, similarity

_VAR = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_PATH = re.compile(r"[A-Za-z_]\w*|\[\d+\]")


class TemplateError(ValueError):
    """A template variable the sample does not have."""


def row_context(sample: Sample) -> JsonObject:
    """``{"item": ..., "sample": ...}`` as OpenAI gives them to graders (the python grader's own)."""
    return payloads.mka1_sample(sample)


def lookup(expr: str, context: JsonObject) -> JsonValue:
    parts = _PATH.findall(expr)
    if not parts or "".join(p if p.startswith("[") else "." + p for p in parts).lstrip(".") != expr.replace(" ", ""):
        raise TemplateError(f"template variable {{{{ {expr} }}}} is not a path like item.x or sample.output_text")
    value: JsonValue = context
    for part in parts:
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or index >= len(value):
                raise TemplateError(f"{{{{ {expr} }}}}: no element {index}")
            value = value[index]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise TemplateError(f"{{{{ {expr} }}}}: the row has no field {part!r}")
    return value


def render(template: str, context: JsonObject) -> str:
    """OpenAI's template substitution; the text around the variables is kept as it is (no trimming)."""
    def one(match: re.Match[str]) -> str:
        value = lookup(match.group(1), context)
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _VAR.sub(one, template)


def string_check(operation: str, given: str, reference: str) -> float:
    if operation == "eq":
        return float(given == reference)
    if operation == "ne":
        return float(given != reference)
    if operation == "like":
        return float(reference in given)
    if operation == "ilike":
        return float(reference.lower() in given.lower())
    raise ValueError(f"unknown string_check operation {operation!r}")


def _failure(error: str, details: JsonObject) -> Outcome:
    return Outcome(status="error", error=error, details=details)


class _Part:
    """One OpenAI grader over a batch: its outcomes, one a sample."""

    batch_size: int | None = 256
    io_bound = False

    def __init__(self, criterion: JsonObject) -> None:
        self.criterion = criterion
        self.details: JsonObject = {"openai_type": criterion["type"], "openai_name": criterion.get("name")}

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return [self.safe(s) for s in samples]

    def safe(self, sample: Sample) -> Outcome:
        try:
            return self.score(sample)
        except (TemplateError, similarity.MetricUnavailable, openai_formula.FormulaError) as exc:
            return _failure(str(exc), self.details)

    def score(self, sample: Sample) -> Outcome:
        raise NotImplementedError

    def ok(self, score: float, **extra: JsonValue) -> Outcome:
        threshold = self.criterion.get("pass_threshold")
        details = {**self.details, **extra}
        if isinstance(threshold, (int, float)):
            details["passed"] = reaches(score, threshold)  # OpenAI's own pass line
        return Outcome.scored(score, {}, details=details)

    async def aclose(self) -> None:
        return None


class _StringCheck(_Part):
    def score(self, sample: Sample) -> Outcome:
        ctx = row_context(sample)
        value = string_check(self.criterion["operation"], render(self.criterion["input"], ctx),
                             render(self.criterion["reference"], ctx))
        return self.ok(value, passed=value == 1.0)


class _TextSimilarity(_Part):
    def __init__(self, criterion: JsonObject, ctx: GradingContext, endpoint: str | None) -> None:
        super().__init__(criterion)
        self.metric = criterion["evaluation_metric"]
        self.details["metric"] = self.metric
        self.client: JudgeClient | None = None
        if self.metric == "cosine":
            from studio.core.judges.scorer import client_for

            self.client = client_for(ctx, endpoint, None)
            self.batch_size, self.io_bound = 32, True
            self.function = None
        else:
            self.function = similarity.text_metric(self.metric)  # METEOR without WordNet: refused now

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        if self.client is None:
            return [self.safe(s) for s in samples]
        client = self.client
        return list(await asyncio.gather(*(self._cosine(client, s) for s in samples)))

    def score(self, sample: Sample) -> Outcome:
        ctx = row_context(sample)
        assert self.function is not None
        return self.ok(self.function(render(self.criterion["input"], ctx), render(self.criterion["reference"], ctx)))

    async def _cosine(self, client: JudgeClient, sample: Sample) -> Outcome:
        from studio.core.judges.http.errors import JudgeError

        try:
            ctx = row_context(sample)
            texts = [render(self.criterion["input"], ctx), render(self.criterion["reference"], ctx)]
            body = await client.embeddings(texts)
            vectors = [d["embedding"] for d in sorted(body["data"], key=lambda d: d.get("index", 0))]
            return self.ok(similarity.cosine(vectors[0], vectors[1]))
        except (TemplateError, JudgeError) as exc:
            return _failure(str(exc), self.details)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            return _failure(f"the embeddings answer is not OpenAI's shape ({exc.__class__.__name__}: {exc})", self.details)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()


class _Python(_Part):
    def __init__(self, criterion: JsonObject, ctx: GradingContext, key: str) -> None:
        super().__init__(criterion)
        from studio.core.sandbox import scorer as sandbox_scorer
        from studio.core.sandbox.pool import shared_pool
        from studio.core.sandbox.settings import SandboxSettings

        self.details["image_tag"] = criterion.get("image_tag")
        function = FunctionGrader(key=key, source=criterion["source"], contract="mka1_sample",
                                  timeout_seconds=PYTHON_SECONDS, memory_mb=PYTHON_MEMORY_MB)
        # the run's sandbox settings, plus the packages of OpenAI's image (read-only; workers of
        # their own, so a function grader's workers still see the standard library alone)
        base = ctx.options.get("sandbox_pool")
        settings = base.settings if base is not None else SandboxSettings()
        pool = shared_pool(settings.model_copy(update={"packages": PYTHON_IMAGE_PACKAGES}),
                           base.size if base is not None else None)
        self.inner = sandbox_scorer.FunctionScorer(function, ctx, pool)
        self.batch_size = self.inner.batch_size

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        outcomes = await self.inner.score_batch(samples)
        out = []
        for outcome in outcomes:
            if outcome.status == "ok" and outcome.score is not None:
                scored = self.ok(outcome.score)  # the grader's own details kept beside OpenAI's
                out.append(scored.model_copy(update={"details": {**outcome.details, **scored.details},
                                                     "duration_ms": outcome.duration_ms, "rationale": outcome.rationale}))
            else:
                out.append(outcome.model_copy(update={"details": {**outcome.details, **self.details}}))
        return out

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Model(_Part):
    """score_model / label_model: the rendered messages, one call a sample, a JSON answer."""

    batch_size = 32
    io_bound = True

    def __init__(self, criterion: JsonObject, ctx: GradingContext, endpoint: str | None) -> None:
        super().__init__(criterion)
        from studio.core.judges.scorer import client_for

        self.client = client_for(ctx, endpoint, criterion.get("model"))
        self.cancel = ctx.cancel
        if criterion["type"] == "label_model":
            result: JsonObject = {"type": "string", "enum": list(criterion["labels"])}
        else:
            result = {"type": "number"}
        self.schema = {"type": "object", "properties": {"result": result}, "required": ["result"],
                       "additionalProperties": False}
        params = criterion.get("sampling_params") or {}
        self.params = {"temperature": params.get("temperature"), "max_tokens": params.get("max_completions_tokens"),
                       "seed": params.get("seed"), "top_p": params.get("top_p"),
                       "reasoning_effort": params.get("reasoning_effort")}

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        return list(await asyncio.gather(*(self._one(s) for s in samples)))

    def messages(self, sample: Sample) -> JsonArray:
        from studio.core.judges.http.chat import ChatMessage

        ctx = row_context(sample)
        out = []
        for n, message in enumerate(self.criterion["input"]):
            content = message.get("content")
            if isinstance(content, dict):
                content = [content]
            if isinstance(content, list):  # content parts: text ones are joined, an image is refused
                texts = []
                for part in content:
                    kind = part.get("type") if isinstance(part, dict) else "input_text"
                    if kind in ("input_text", "output_text"):
                        texts.append(part["text"])
                    elif isinstance(part, str):
                        texts.append(part)
                    else:
                        raise TemplateError(f"input[{n}] holds {kind} content; the studio's endpoints take text "
                                            "only, so this grader cannot run here")
                content = "".join(texts)
            role = "system" if message.get("role") == "developer" else message.get("role", "user")
            out.append(ChatMessage(role=role, content=render(str(content), ctx)))
        return out

    async def _one(self, sample: Sample) -> Outcome:
        """One call through the judge path's ``Trace``: the outcome keeps the exact prompt, the raw
        answer, tokens and the call (counted as every judge's), with an echoed key redacted."""
        from studio.core.judges.http.chat import ChatRequest
        from studio.core.judges.http.errors import JudgeError
        from studio.core.judges.trace import Trace

        trace = Trace(self.client)
        if self.cancel.is_set():
            return trace.failure("cancelled", self.details)
        try:
            request = ChatRequest(messages=self.messages(sample), json_mode=True, json_schema=self.schema,
                                  **self.params)
            response = await trace.ask(str(self.criterion["type"]), request)
        except (TemplateError, JudgeError) as exc:
            return trace.failure(str(exc), self.details)
        try:
            outcome = self.read(response.text)
        except ValueError as exc:
            return trace.failure(str(exc), {**self.details, "answer": response.text})
        return trace.outcome(score=outcome.score, rationale=outcome.rationale, details=outcome.details,
                             status=outcome.status, error=outcome.error)

    def read(self, text: str) -> Outcome:
        try:
            answer = json.loads(text)
        except ValueError:
            answer = text.strip()
        result = answer.get("result") if isinstance(answer, dict) else answer
        if self.criterion["type"] == "label_model":
            if not isinstance(result, str) or result not in self.criterion["labels"]:
                raise ValueError(f"the model answered {result!r}, not one of the labels {self.criterion['labels']}")
            passed = result in self.criterion["passing_labels"]
            return Outcome.scored(float(passed), {}, details={**self.details, "label": result, "passed": passed})
        try:
            score = float(result)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"the model answered {result!r}, not a score") from None
        low, high = (self.criterion.get("range") or [0, 1])[:2]
        if not low <= score <= high:
            raise ValueError(f"the model's score {score} is outside the range [{low}, {high}]")
        return self.ok(score, range=[low, high])

    async def aclose(self) -> None:
        await self.client.aclose()


class _Multi(_Part):
    def __init__(self, criterion: JsonObject, ctx: GradingContext, endpoint: str | None, key: str) -> None:
        super().__init__(criterion)
        graders = multi_parts(criterion)
        self.parts = {name: build(g, ctx, endpoint, f"{key}.{name}") for name, g in graders.items()}
        self.formula = openai_formula.parse(criterion["calculate_output"], set(self.parts))
        sizes = [p.batch_size for p in self.parts.values() if p.batch_size]
        self.batch_size = min(sizes) if sizes else None
        self.io_bound = any(p.io_bound for p in self.parts.values())

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        names = list(self.parts)
        per_part = await asyncio.gather(*(self.parts[n].score_batch(samples) for n in names))
        out = []
        for i in range(len(samples)):
            outcomes = {n: per_part[k][i] for k, n in enumerate(names)}
            subs = {n: {"status": o.status, "score": o.score, "error": o.error} for n, o in outcomes.items()}
            failed = [f"{n}: {o.error or o.status}" for n, o in outcomes.items() if o.status != "ok" or o.score is None]
            if failed:
                out.append(_failure("; ".join(failed), {**self.details, "graders": subs}))
                continue
            scores = {n: float(o.score) for n, o in outcomes.items() if o.score is not None}  # each scored (above)
            try:
                value = openai_formula.evaluate(self.formula, scores)
            except openai_formula.FormulaError as exc:
                out.append(_failure(str(exc), {**self.details, "graders": subs}))
                continue
            tokens = {"prompt_tokens": sum(o.prompt_tokens for o in outcomes.values()),
                      "completion_tokens": sum(o.completion_tokens for o in outcomes.values())}
            scored = self.ok(value, graders=subs)
            out.append(scored.model_copy(update={**tokens, "scores": scores}))
        return out

    async def aclose(self) -> None:
        for part in self.parts.values():
            await part.aclose()


def build(criterion: JsonObject, ctx: GradingContext, endpoint: str | None, key: str) -> _Part:
    kind = criterion.get("type")
    if kind == "string_check":
        return _StringCheck(criterion)
    if kind == "text_similarity":
        return _TextSimilarity(criterion, ctx, endpoint)
    if kind == "python":
        return _Python(criterion, ctx, key)
    if kind in ("score_model", "label_model"):
        return _Model(criterion, ctx, endpoint)
    if kind == "multi":
        return _Multi(criterion, ctx, endpoint, key)
    raise similarity.MetricUnavailable(f"OpenAI grader type {kind!r} cannot run here")


class OpenAIScorer(ScorerBase):
    def __init__(self, grader: OpenAIGrader, ctx: GradingContext) -> None:
        self.grader = grader
        self.part = build(grader.criterion, ctx, grader.endpoint, grader.key)
        self.batch_size = self.part.batch_size
        self.io_bound = self.part.io_bound
        self.parallel_batches = 4 if self.io_bound else 1

    async def score_batch(self, samples: Sequence[Sample]) -> list[Outcome]:
        outcomes = await self.part.score_batch(samples)
        key = self.grader.metric.key
        return [o.model_copy(update={"scores": {**o.scores, key: o.score}}) if o.status == "ok" and o.score is not None
                else o for o in outcomes]

    async def aclose(self) -> None:
        await self.part.aclose()


def make_scorer(grader: OpenAIGrader, ctx: GradingContext) -> OpenAIScorer:
    return OpenAIScorer(grader, ctx)


STARTER = {"criterion": {"type": "string_check", "name": "exact", "input": "{{ sample.output_text }}",
                         "reference": "{{ item.reference }}", "operation": "eq"}}

KIND = Kind(kind="openai_grader", counted=True, model=OpenAIGrader, family="rule", rank=60, label="OpenAI grader",
            icon=("mdi6.robot-outline", "#10a37f"), scorer=f"{__name__}:make_scorer", starter=STARTER,
            # sandboxed: a python criterion runs its source in the sandbox, so a run says so as for functions
            sandboxed=True,
            platforms={"openai": NATIVE, "adaptive": refused("an OpenAI grader runs with OpenAI's rules; Adaptive has no such grader")},
            elsewhere=lambda label: f"{label} has no OpenAI grader; export it to OpenAI")
