"""An OpenAI grader kept as OpenAI wrote it: one testing criterion of an OpenAI eval.

OpenAI's Evals platform closed in November 2026; the teams that built evals there keep running them
here. The criterion's JSON is held verbatim (``criterion``), so it runs with OpenAI's semantics
(``studio.core.graders.openai_grader``) and exports back byte for byte; the studio's own fields
(key, name, metric) sit beside it. The shape of each type is OpenAI's API reference and the
``openai`` package's ``openai.types.graders`` / ``eval_create_params`` types; what a criterion holds
beyond them is kept too, and named by the importer.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from studio.core.json_types import JsonObject, JsonValue

from .common import GraderBase

#: the grader types OpenAI documents (``openai.types.graders``)
OPENAI_TYPES = ("string_check", "text_similarity", "score_model", "label_model", "python", "multi")
#: OpenAI's limit on a python grader's source (graders guide: "less than 256kB")
PYTHON_SOURCE_LIMIT = 256 * 1024
#: OpenAI's limit on one python grader's run (graders guide: "limited to 2 minutes")
PYTHON_SECONDS = 120.0
#: OpenAI's memory for a python grader (graders guide: "2GB of memory")
PYTHON_MEMORY_MB = 2048
#: the third-party packages of OpenAI's python grader image (graders guide, "Python graders",
#: its table of additional packages): distribution names as pip knows them. A python criterion may
#: import these (and what they import) when the studio's environment has them, read-only, inside
#: the sandbox; nothing else of site-packages is visible (sandbox/packages.py, docs/openai.md)
PYTHON_IMAGE_PACKAGES = ("numpy", "scipy", "sympy", "pandas", "rapidfuzz", "scikit-learn", "rouge-score",
                         "deepdiff", "jsonschema", "pydantic", "pyyaml", "nltk", "sqlparse", "rdkit",
                         "scikit-bio", "ast-grep-py")


class OpenAIGrader(GraderBase):
    """One OpenAI grader (a testing criterion), run with OpenAI's rules; scores as the type gives them
    (a score_model's ``range``, a python grader's float), so no fixed bounds."""

    kind: Literal["openai_grader"] = "openai_grader"
    SCORE_BOUNDS: ClassVar[tuple[float, float] | None] = None
    criterion: JsonObject = Field(description="the OpenAI grader JSON, verbatim")
    #: the endpoint a score_model/label_model/cosine criterion calls (None: the run's endpoint)
    endpoint: str | None = None
    #: the criterion as the file wrote it (JSON text, its keys in their order): the library stores
    #: definitions with sorted keys, and an export writes the criterion back in the file's order
    as_written: str | None = None

    def written(self) -> JsonObject:
        """The criterion in the order the file wrote it, while it is unchanged; else as held."""
        if self.as_written is not None:
            import json

            try:
                found = json.loads(self.as_written)
            except ValueError:
                return self.criterion
            if isinstance(found, dict) and found == self.criterion:  # only a dict equals the criterion
                return found
        return self.criterion

    @field_validator("criterion")
    @classmethod
    def _typed(cls, value: JsonObject) -> JsonObject:
        if value.get("type") not in OPENAI_TYPES:
            raise ValueError(f"type must be one of {', '.join(OPENAI_TYPES)}, not {value.get('type')!r}")
        return value

    def own_endpoints(self) -> tuple[str | None, ...]:
        """``endpoint`` when the criterion calls a model (score_model, label_model, a cosine
        similarity's embeddings, or a multi grader holding one): those calls carry the user's key
        and spend from a run's budget, so the key check, the approvals and a cost cap's price check
        read it, as they read a judge's."""
        return (self.endpoint,) if _calls_model(self.criterion) else ()

    @property
    def openai_type(self) -> str:
        return str(self.criterion["type"])

    def score_bounds(self) -> tuple[float, float] | None:
        """What the type scores: 0..1 for string_check, label_model and the text metrics (cosine
        -1..1), a score_model's ``range``; a python or multi grader any finite number."""
        kind = self.openai_type
        if kind in ("string_check", "label_model"):
            return (0.0, 1.0)
        if kind == "text_similarity":
            return (-1.0, 1.0) if self.criterion.get("evaluation_metric") == "cosine" else (0.0, 1.0)
        if kind == "score_model":
            low, high = (self.criterion.get("range") or [0, 1])[:2]
            return (float(low), float(high))
        return None

    @property
    def pass_threshold(self) -> float | None:
        value = self.criterion.get("pass_threshold")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _calls_model(criterion: JsonObject) -> bool:
    """Whether running ``criterion`` calls an endpoint (graders/openai_grader.py ``build``: the
    model types, cosine similarity, and a multi grader's parts, one grader or a mapping of them)."""
    kind = criterion.get("type")
    if kind in ("score_model", "label_model"):
        return True
    if kind == "text_similarity":
        return criterion.get("evaluation_metric") == "cosine"
    if kind == "multi":
        parts = multi_parts(criterion)
        return isinstance(parts, dict) and any(isinstance(p, dict) and _calls_model(p) for p in parts.values())
    return False


def multi_parts(criterion: JsonObject) -> JsonValue:
    """A multi grader's ``graders`` by name: the SDK types ``graders`` as one grader too, which is
    then the one part, under its own name. Whatever else the file holds is returned as it is."""
    graders = criterion.get("graders")
    if isinstance(graders, dict) and "type" in graders:
        return {str(graders.get("name", "grader")): graders}
    return graders
