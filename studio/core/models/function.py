"""Function graders: Python source run in the sandbox under one platform's calling contract."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .common import GraderBase

Contract = Literal["adaptive", "mka1_sample", "mka1_batch", "letta", "promptfoo"]

CONTRACT_LABELS: dict[str, str] = {
    "adaptive": "Adaptive: async def grade(thread)",
    "mka1_sample": "MKA1 sample: grade(sample, item[, ctx])",
    "mka1_batch": "MKA1 batch: grade_batch(samples[, ctx])",
    "letta": "Letta custom tool grader",
    "promptfoo": "promptfoo: get_assert(output, context)",
}

MAX_SOURCE_BYTES = 64 * 1024


class FunctionGrader(GraderBase):
    kind: Literal["function"] = "function"
    SCORE_BOUNDS: ClassVar[tuple[float, float] | None] = None  # any finite number
    source: str
    contract: Contract = "adaptive"
    function_name: str | None = Field(
        default=None, description="Entry point when not the contract's default (Letta file.py:fn)"
    )
    model_access: bool = Field(default=False, description="MKA1 model_backed: ctx model helpers")
    max_model_calls: int = Field(default=64, ge=0, le=500)
    endpoint: str | None = Field(default=None, description="Endpoint serving ctx model calls")
    #: per sample, a hard deadline; 10 s suits a grader (a hung one costs seconds, not minutes)
    timeout_seconds: float = Field(default=10.0, gt=0, le=600)
    memory_mb: int = Field(default=512, ge=32, le=16384)

    def stays_here(self) -> str | None:
        if self.contract == "mka1_batch":
            return "an MKA1 grade_batch grader sees the whole dataset in one call: it runs on this machine"
        if self.model_access:
            return "a model-backed function grader reaches its endpoint through this machine: it runs here"
        return None

    def own_endpoints(self) -> tuple[str | None, ...]:
        """Its ``ctx`` model helpers call ``endpoint`` when the grader has model access."""
        return (self.endpoint,) if self.model_access else ()
