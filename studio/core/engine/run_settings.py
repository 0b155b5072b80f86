"""What a run is asked to do that both a run request (engine/request.py) and the run's stored options
(runner.RunOptions) hold: one list of fields, so the two cannot drift apart."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from studio.core.errors import StudioError
from studio.core.models.pass_rule import DEFAULT_PASS_THRESHOLD


class RequestRefused(StudioError):
    """A request the engine will not start: one sentence, and the run could not be done (exit 2).
    (Here, below the planning that refuses a run of nothing, so that planning need not import the
    request; ``engine.request`` is where callers import it from.)"""

    exit_code = 2


class RunSettings(BaseModel):
    model_config = ConfigDict(defer_build=True)

    version: int | None = None
    limit: int | None = Field(default=None, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    endpoint: str | None = None
    use_cache: bool = True
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    #: grade every sample even when the first ones all fail the same way (see streak.py)
    keep_going: bool = False
