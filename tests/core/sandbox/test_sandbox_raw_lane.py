"""The engine's raw lane (stored sample JSON, payloads built in the worker) grades like the parsed lane."""

from __future__ import annotations

import asyncio
import json

import pytest

from studio.core.models import FunctionGrader, Sample, Turn
from studio.core.sandbox import payloads
from studio.core.sandbox.guest.studio_guest import payloads as guest
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext
from studio.core.store import Library
from studio.core.store.runs import outcome_values

SAMPLES = [
    Sample(id="a"),
    Sample(
        id="b",
        messages=[Turn(role="system", content="sys"), Turn(role="user", content="q?"), Turn(role="assistant")],
        completion="x", expected="y", metadata={"expected": "z", "k": [1, 2]},
        fields={"prompt": "P", "vars": {"a": 1}, "extracted_output": "E", "task_id": 3, "input": "I",
                "rubric_vars": {"r": 1}},
    ),
    Sample(id="c", messages=[Turn(role="assistant", content="only")], expected="e", fields={"prompt": 5, "choices": ["a"]}),
    Sample(id="d", messages=[Turn(role="user", content="u1\nnext"), Turn(role="tool", content="t")], completion="",
           metadata={"m": {"n": 1}}),
]

# every grader echoes what it was given, so equal outcomes mean equal payloads
ECHO = {
    "adaptive": "def grade(thread):\n    print(repr(thread.get_turns()), repr(thread.metadata))\n    return 1.0\n",
    "mka1_sample": "def grade(sample, item):\n    print(sorted(sample.items()), sorted(item.items()))\n    return 1.0\n",
    "mka1_batch": "def grade_batch(samples):\n    return {'metrics': {'n': float(len(samples))},"
                  " 'samples': [{'sample_id': s['sample_id'], 'scores': {'t': 1.0}, 'judge': s} for s in samples]}\n",
    "letta": "from letta_evals import grader, GradeResult\n@grader\ndef g(sample, submission):\n"
             "    return GradeResult(score=1.0, rationale=repr((sample, submission)))\n",
    "promptfoo": "def get_assert(output, context):\n    context['vars']['mutated'] = 1\n"
                 "    return {'pass': True, 'reason': repr((output, context))}\n",
}


@pytest.mark.parametrize("contract", sorted(guest.BUILDERS))
def test_guest_builders_match_the_studio(contract: str) -> None:
    for sample in SAMPLES:
        host = json.loads(json.dumps(payloads.BUILDERS[contract](sample)))
        stored = json.loads(sample.model_dump_json(exclude_defaults=True))
        assert json.loads(json.dumps(guest.builder(contract)(stored))) == host


@pytest.mark.parametrize("contract", sorted(ECHO))
def test_raw_lane_grades_like_parsed_samples(contract: str, sandbox_pool: WorkerPool) -> None:
    grader = FunctionGrader(key="t", source=ECHO[contract], contract=contract, timeout_seconds=5.0)  # type: ignore[arg-type]
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": sandbox_pool}))
    try:
        assert "raw" in scorer.lanes
        parsed = scorer.score_sync(SAMPLES)
        rows = [(s.id, s.model_dump_json(exclude_defaults=True)) for s in SAMPLES]
        raw = asyncio.run(scorer.score_raw_batch(rows))
    finally:
        scorer.close()
    strip = [o.model_dump(exclude={"duration_ms"}) for o in parsed]
    assert [o.model_dump(exclude={"duration_ms"}) for o in raw] == strip
    assert all(o.status == "ok" for o in raw)


def test_letta_extractor_stays_on_the_parsed_lane(sandbox_pool: WorkerPool) -> None:
    grader = FunctionGrader.model_validate({
        "key": "t", "source": ECHO["letta"], "contract": "letta",
        "extractor": {"kind": "last_assistant"},
    })
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": sandbox_pool}))
    assert "raw" not in scorer.lanes
    scorer.close()


def test_iter_raw_matches_iter_indexed(library: Library) -> None:
    record = library.datasets.create("d", [Sample(id=f"s{i}", completion=str(i)) for i in range(12)])
    skip = {0, 5, 6}
    raw = list(library.datasets.iter_raw(record.id, offset=1, limit=9, skip=skip, page=4))
    parsed = list(library.datasets.iter_indexed(record.id, offset=1, limit=9, skip=skip, page=4))
    assert [(i, sid) for i, sid, _ in raw] == [(i, s.id) for i, s in parsed]
    assert [Sample.model_validate_json(data) for _, _, data in raw] == [s for _, s in parsed]


# plain floats (the worker's float array) mixed with every other kind of result, gaps between them
MIXED = """import math
async def grade(thread):
    n = int(thread.completion())
    kind = n % 7
    if kind == 1:
        raise ValueError(f"no {n}")
    if kind == 2:
        print("said", n)
        return 0.5
    if kind == 3:
        return math.nan
    if kind == 4:
        return n
    if kind == 5:
        return -0.0
    return n / 7
"""


def test_rows_lane_mixes_float_arrays_and_entries_like_outcomes(sandbox_pool: WorkerPool) -> None:
    grader = FunctionGrader(key="t", source=MIXED, timeout_seconds=5.0)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": sandbox_pool}))
    samples = [Sample(id=f"s{i}", completion=str(i)) for i in range(40)]
    try:
        parsed = scorer.score_sync(samples)
        batch = [(100 + i, s.id, s.model_dump_json(exclude_defaults=True)) for i, s in enumerate(samples)]
        rows = asyncio.run(scorer.score_raw_rows(9, batch))
    finally:
        scorer.close()
    kinds = [row[3] for row in rows]
    assert kinds.count("ok") == 40 - 6 - 6 and kinds.count("error") == 6 and kinds.count("invalid") == 6
    for row, outcome in zip(rows, parsed, strict=True):
        expected = outcome_values(9, row[1], row[2], outcome)
        assert row[:10] == expected[:10] and row[11:] == expected[11:]  # [10]: duration, measured twice
    assert rows[2][7] is not None and "said 2" in rows[2][7]  # printed text kept beside its float
