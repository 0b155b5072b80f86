"""How far a one-call score (OpenAI score_model) lands from the range judge's logprob-weighted score.

Runs the demo range judge on the three demo datasets against the scripted fake judge (not a model:
its numbers show the method's gap, not a real model's), and compares the studio's score (the
integers weighed by their logprobs) with the score one sampled answer at temperature 0 gives (the
most likely integer), both normalised to 0..1. Prints the mean and max absolute difference; the
OpenAI export's note quotes them.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from studio.core.datasets import read_dataset
from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.graders.registry import make_scorer
from studio.core.models.endpoints import EndpointConfig
from studio.core.models.files import load
from studio.core.scoring import GradingContext
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo"


def main() -> int:
    judge = load(DEMO / "graders" / "answer-quality-1to5.grader.yaml")
    low, high = judge.score_range
    gaps: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, FakeJudgeServer() as server:
        library = Library.open(Path(tmp) / "lib.sqlite")
        EndpointRepository.of(library).save(EndpointConfig(name=judge.endpoint, base_url=server.base_url,
                                                           model="fake-judge", supports_logprobs=True))
        for name in ("qa", "rag", "json_outputs"):
            samples = read_dataset(DEMO / "datasets" / f"{name}.jsonl").samples

            async def go(samples=samples):  # type: ignore[no-untyped-def]
                scorer = make_scorer(judge, GradingContext(library=library))
                try:
                    return await scorer.score_batch(samples)
                finally:
                    await scorer.aclose()

            for outcome in asyncio.run(go()):
                probs = outcome.details.get("probabilities")
                if outcome.status != "ok" or not probs:
                    continue
                top = int(max(probs, key=probs.get))
                gaps.append(abs(outcome.score - (top - low) / (high - low)))
        library.close()
    print(f"range judge, {len(gaps)} demo samples: mean |logprob-weighted - one sampled| = "
          f"{sum(gaps) / len(gaps):.3f}, max = {max(gaps):.3f} (0..1 scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
