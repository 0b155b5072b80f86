"""Pydantic models at the core's boundaries: graders, threads and samples, outcomes and runs."""

from .common import Extractor, GraderBase, Metric, walk
from .definition import (
    GRADER_ADAPTER,
    Component,
    CompositeGrader,
    dump_grader,
    parse_grader,
)
from .function import CONTRACT_LABELS, MAX_SOURCE_BYTES, Contract, FunctionGrader
from .javascript import JavascriptGrader
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
from .panels import Juror, JuryGrader, PairwiseJudge
from .result import Outcome, RunInfo, valid_number
from .rules import BashGrader, BuiltinGrader, BuiltinOptions, ExternalEndpoint
from .thread import Sample, SampleRow, Thread, ToolCall, Turn
from .union import GraderDefinition, model_for

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
