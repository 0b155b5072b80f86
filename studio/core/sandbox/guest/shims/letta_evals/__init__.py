"""Stdlib-only stand-in for ``letta_evals``: what a custom tool grader imports."""

from .decorators import extractor, grader
from .models import GradeResult, Sample

__all__ = ["GradeResult", "Sample", "extractor", "grader"]
