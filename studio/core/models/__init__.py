"""Pydantic models at the core's boundaries: graders, threads and samples, outcomes and runs.

The kinds a run of another kind never touches (function, JavaScript, jury and pairwise panels,
bash, built-in, external) are imported when one of their names is first read from this package:
a judge run's start-up does not define their models (bench/README.md, section 10).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .common import Extractor, GraderBase, Metric, walk
from .definition import (
    GRADER_ADAPTER,
    Component,
    CompositeGrader,
    dump_grader,
    parse_grader,
)
from .judges import (
    BinaryJudge,
    BinaryShot,
    CriteriaJudge,
    Criterion,
    JudgeBase,
    LetterJudge,
    PrebuiltJudge,
    RangeJudge,
    RangeShot,
    RubricJudge,
    Subrange,
)
from .result import Outcome, RunInfo, valid_number
from .thread import Sample, SampleRow, Thread, ToolCall, Turn
from .union import GraderDefinition, model_for

if TYPE_CHECKING:
    from .function import CONTRACT_LABELS, MAX_SOURCE_BYTES, Contract, FunctionGrader
    from .javascript import JavascriptGrader
    from .panels import Juror, JuryGrader, PairwiseJudge
    from .rules import BashGrader, BuiltinGrader, BuiltinOptions, ExternalEndpoint

#: name -> the module defining it, imported on first use (``__getattr__``)
_LAZY = {
    **dict.fromkeys(("CONTRACT_LABELS", "MAX_SOURCE_BYTES", "Contract", "FunctionGrader"), "function"),
    "JavascriptGrader": "javascript",
    **dict.fromkeys(("Juror", "JuryGrader", "PairwiseJudge"), "panels"),
    **dict.fromkeys(("BashGrader", "BuiltinGrader", "BuiltinOptions", "ExternalEndpoint"), "rules"),
}


def __getattr__(name: str) -> object:  # a class or a constant; mypy sees each name by the imports above
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CONTRACT_LABELS",
    "GRADER_ADAPTER",
    "MAX_SOURCE_BYTES",
    "BashGrader",
    "BinaryJudge",
    "BinaryShot",
    "BuiltinGrader",
    "BuiltinOptions",
    "Component",
    "CompositeGrader",
    "Contract",
    "CriteriaJudge",
    "Criterion",
    "ExternalEndpoint",
    "Extractor",
    "FunctionGrader",
    "JavascriptGrader",
    "GraderBase",
    "GraderDefinition",
    "JudgeBase",
    "Juror",
    "JuryGrader",
    "LetterJudge",
    "Metric",
    "Outcome",
    "PairwiseJudge",
    "PrebuiltJudge",
    "RangeJudge",
    "RangeShot",
    "RubricJudge",
    "RunInfo",
    "Sample",
    "SampleRow",
    "Subrange",
    "Thread",
    "ToolCall",
    "Turn",
    "dump_grader",
    "model_for",
    "parse_grader",
    "valid_number",
    "walk",
]
