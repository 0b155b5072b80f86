"""Human labels of samples: what a label file line or a key press gives, and a stored version."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

DEFAULT_KEY = "human"
Verdict = Literal["PASS", "FAIL", "NA"]


class LabelInput(BaseModel):
    """One label as given (a file line, a key press): a verdict or a score, or neither to clear."""

    model_config = ConfigDict(defer_build=True)

    sample_id: str
    verdict: Verdict | None = None
    score: float | None = None
    note: str = ""
    labeler: str = ""

    @model_validator(mode="after")
    def _one_kind(self) -> LabelInput:
        if self.verdict is not None and self.score is not None:
            raise ValueError("give a verdict (PASS/FAIL/NA) or a score, not both")
        if self.score is not None and not math.isfinite(self.score):
            raise ValueError("a score must be a finite number")
        return self


def label_value(verdict: str | None, score: float | None) -> str:
    """A label as people read it: its verdict, its score ("4", "2.5"), or "cleared"."""
    if verdict is None and score is None:
        return "cleared"
    return verdict or f"{score:g}"


class Label(BaseModel):
    model_config = ConfigDict(defer_build=True)

    sample_id: str
    version: int
    verdict: Verdict | None = None
    score: float | None = None
    note: str = ""
    labeler: str = ""
    #: None: a time the library could not read (a hand edit): shown "unknown time"
    created_at: datetime | None

    @property
    def cleared(self) -> bool:
        return self.verdict is None and self.score is None

    @property
    def value(self) -> str:
        return label_value(self.verdict, self.score)
