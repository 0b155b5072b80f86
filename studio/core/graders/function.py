"""Function graders: the sandbox scores them; MKA1 model-backed ones reach a judge endpoint only
through the run's model bridge, which this kind (above both the sandbox and the judges) provides."""

from __future__ import annotations

from studio.core.kinds import NATIVE, Kind
from studio.core.models import FunctionGrader
from studio.core.sandbox import scorer as sandbox_scorer
from studio.core.scoring import GradingContext, Scorer


def make_scorer(grader: FunctionGrader, ctx: GradingContext) -> Scorer:
    if grader.model_access and ctx.library is not None:
        # imported here: a grader without model access runs without the judges' HTTP client
        from studio.core.judges.bridge import make_model_bridge

        if ctx.bridge_factory is None:
            library, use_cache = ctx.library, ctx.use_cache
            ctx.bridge_factory = lambda endpoint: make_model_bridge(library, endpoint, use_cache=use_cache)
        # made now, not on the first sample: an endpoint that cannot be found fails the run up front
        ctx.model_bridge(grader.endpoint)
    return sandbox_scorer.make_scorer(grader, ctx)


FUNCTION_SOURCE = '''\
async def grade(thread):
    """Score the last assistant turn against metadata["expected"] (1.0 = match)."""
    completion = (thread.completion() or "").strip().lower()
    expected = str((thread.metadata or {}).get("expected", "")).strip().lower()
    return 1.0 if expected and expected in completion else 0.0
'''

KIND = Kind(kind="function", sandboxed=True, cluster=True, model=FunctionGrader, family="function", rank=0, icon=("mdi6.language-python", "#3b6fb6"),
    platforms={name: NATIVE for name in ("adaptive", "hud", "inspect", "letta", "mka1", "openai", "promptfoo")}, label="Function", scorer=f"{__name__}:make_scorer", editor="function",
            lanes=frozenset({"samples", "raw", "rows"}),
            starter={"source": FUNCTION_SOURCE, "contract": "adaptive"})
