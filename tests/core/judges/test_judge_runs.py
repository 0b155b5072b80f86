"""Judges through the engine: a run with a fault and an NA completes, the re-run is all cache hits."""

from __future__ import annotations

from judge_helpers import qa

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BinaryJudge


def test_a_judge_run_end_to_end(library, endpoint, fake_judge) -> None:
    library.graders.create(
        BinaryJudge(key="capital", criteria="Names the right capital.", endpoint="fake")
    )
    samples = [
        qa(f"s{i}", "Capital of France?", "Paris" if i % 2 else "Lyon", "Paris") for i in range(10)
    ]
    samples[3] = qa("s3", "Capital of France?", "Paris [[fault:500]]", "Paris")
    samples[4] = qa("s4", "Tell me a joke", "A joke [[judge:NA]]")
    library.datasets.create("geo", samples)

    run = run_grader(library, "capital", "geo", RunOptions(concurrency=4))
    assert run.status == "completed"
    assert run.counts == {"ok": 8, "error": 1, "skipped": 1}
    assert run.aggregates["mean"] == 0.5  # four PASS, four FAIL; the error and the NA left out
    rows = {r["sample_id"]: r for r in library.runs.results(run.id)}
    assert "HTTP 500" in rows["s3"]["error"]
    assert rows["s1"]["details"]["calls"][0]["messages"][0]["role"] == "system"
    assert rows["s1"]["prompt_tokens"] > 0

    calls = fake_judge.requests["/v1/chat/completions"]
    again = run_grader(library, "capital", "geo", RunOptions(concurrency=4))
    assert again.aggregates["cached"] == 9  # the error is asked again; nothing else is
    assert fake_judge.requests["/v1/chat/completions"] - calls == 5  # 1 + 4 retries for s3

    fresh = run_grader(library, "capital", "geo", RunOptions(concurrency=4, use_cache=False))
    assert fresh.aggregates["cached"] == 0
