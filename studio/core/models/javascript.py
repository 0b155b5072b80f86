"""promptfoo ``javascript`` assertions: JavaScript run by Node inside the sandbox.

``source`` is either the assertion's inline code (``form: inline``, promptfoo's ``value:``: one
expression, or a function body when it spans several lines) or a whole module (``form: module``, the
file a ``file://check.js[:fn]`` value names, carried in the definition so the grader travels alone).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from studio.core.json_types import JsonObject

from .common import GraderBase
from .function import MAX_SOURCE_BYTES


class JavascriptGrader(GraderBase):
    kind: Literal["javascript"] = "javascript"
    source: str = Field(max_length=MAX_SOURCE_BYTES)
    form: Literal["inline", "module"] = "inline"
    #: module form: the exported function to call (promptfoo's ``file://x.js:fn``); none = the export
    function_name: str | None = None
    #: promptfoo's ``threshold``: a number result passes when >= threshold (else when > 0)
    threshold: float | None = None
    #: ``not-javascript``: the pass verdict is inverted (a number keeps its score)
    negate: bool = False
    #: promptfoo's assertion ``config``: handed to the code as ``context.config``
    config: JsonObject | None = None
    #: where the file came from (``file://...`` as written), shown to people; never read again
    origin: str | None = None
    timeout_seconds: float = Field(default=10.0, gt=0, le=600)
    memory_mb: int = Field(default=256, ge=32, le=16384)
