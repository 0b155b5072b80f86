"""How each platform's grader is found in a module and called with one sample's payload.

The parent sends payloads already shaped for the contract; here they become the objects the
platform's graders expect (StringThread, MKA1 dicts, Letta Sample, promptfoo output/context).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep typing out of the worker's start-up
    from collections.abc import Callable
    from types import CodeType

    from studio.core.json_types import JsonObject, JsonValue

ENTRY_NAMES = {
    "adaptive": "grade",
    "mka1_sample": "grade",
    "mka1_batch": "grade_batch",
    "promptfoo": "get_assert",
}


class LoadError(Exception):
    """The module has no usable entry point for its contract."""


def find_entry(namespace: dict[str, object], contract: str, function_name: str | None) -> Callable[..., object]:
    name = function_name or ENTRY_NAMES.get(contract)
    if contract == "letta" and name is None:
        marked = [v for v in namespace.values() if getattr(v, "__letta_grader__", False) and callable(v)]
        if len(marked) == 1:
            return marked[0]
        if len(marked) > 1:
            names = ", ".join(sorted(getattr(f, "__name__", repr(f)) for f in marked))
            raise LoadError(f"several @grader functions ({names}): set the function name")
        raise LoadError("no @grader-decorated function found")
    fn = namespace.get(name or "")
    if not callable(fn):
        raise LoadError(f"no top-level function {name!r}")
    return fn


def positional_count(fn: Callable[..., object]) -> int:
    """Positional parameters, read from the code object (importing inspect costs a worker ~10 ms)."""
    code: CodeType | None = getattr(fn, "__code__", None)
    if code is None:
        return 1
    if code.co_flags & 0x04:  # *args
        return 3
    bound = 1 if getattr(fn, "__self__", None) is not None else 0
    return code.co_argcount - bound


def make_caller(contract: str, fn: Callable[..., object], ctx: object) -> Callable[[JsonObject], object]:
    """A one-argument function: payload -> the grader's raw return (maybe a coroutine)."""
    if contract == "adaptive":
        from adaptive_harmony import StringThread

        trusted = StringThread._trusted

        def call_adaptive(p: JsonObject) -> object:
            return fn(trusted(p["turns"], p["metadata"]))

        return call_adaptive
    wants_ctx = positional_count(fn)
    if contract == "mka1_sample":
        if wants_ctx >= 3:
            return lambda p: fn(p["sample"], p["item"], ctx)
        return lambda p: fn(p["sample"], p["item"])
    if contract == "mka1_batch":
        if wants_ctx >= 2:
            return lambda p: fn(p, ctx)
        return lambda p: fn(p)
    if contract == "letta":
        from letta_evals.models import GradeResult, Sample

        def call_letta(p: JsonObject) -> object:
            if not p["submission"]:  # Letta's rule: an empty submission scores 0 before the grader runs
                return GradeResult(score=0.0, rationale="Empty submission - extractor found no content")
            return fn(Sample(**p["sample"]), p["submission"])

        return call_letta
    if contract == "promptfoo":
        return lambda p: fn(p["output"], p["context"])
    raise LoadError(f"unknown contract {contract!r}")


def to_payload(value: object) -> object:
    """Objects the platforms define become plain data; the parent judges validity."""
    to = getattr(value, "to_payload", None)
    if to is not None and type(value).__name__ == "GradeResult":
        return to()
    return value


class ModelContext:
    """MKA1's ``ctx``: model calls are bridged to the parent; the worker never touches the network."""

    def __init__(self, bridge: Callable[[str, JsonObject], JsonValue], enabled: bool, limit: int) -> None:
        self._bridge = bridge
        self._enabled = enabled
        self._limit = limit
        self.calls = 0

    def _call(self, kind: str, kwargs: JsonObject) -> JsonValue:
        if not self._enabled:
            raise RuntimeError("model access is off for this grader (enable model_access)")
        if self.calls >= self._limit:
            raise RuntimeError(f"max_model_calls ({self._limit}) exceeded")
        self.calls += 1
        return self._bridge(kind, kwargs)

    def responses_create(self, **kwargs: JsonValue) -> JsonValue:
        return self._call("responses", kwargs)

    def embeddings_create(self, **kwargs: JsonValue) -> JsonValue:
        return self._call("embeddings", kwargs)
