"""Export grader definitions to the platforms that run them, and import theirs back.

One module per platform behind ``base.Platform``; ``registry`` finds them.
"""

from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from .registry import detect_platform, get_platform, platforms

__all__ = [
    "ExportResult",
    "ImportResult",
    "Platform",
    "PlatformError",
    "Support",
    "detect_platform",
    "get_platform",
    "platforms",
]
