"""The issue's acceptance run: 20 samples, one of them hostile in one of the ways the studio was
attacked, finishes with 19 honest scores and one clear error - and the studio's own peak RSS stays
within a bound through all of them (the peak resident growth of this process during the run,
tests/peak_memory.py)."""

from __future__ import annotations

import pytest
from hostile_corpus import CORPUS, corpus_grader
from peak_memory import GROWTH_LIMIT_MB, PeakGrowth

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BashGrader, Sample, Turn
from studio.core.store import Library

EVIL = 13

CAPTURE_FLOOD = """import sys
async def grade(thread):
    if thread.metadata.get('evil'):
        sys.modules['studio_guest.loop'].CAPTURE_BYTES = 10**9
        print('x' * (4 << 20))
    return 1.0
"""
BASH_FLOOD = 'if [ "$SAMPLE_ID" = evil ]; then head -c 2G /dev/zero; fi; exit 0'

ATTACKS = ["forge_deep_result", "forge_short_entry", "forge_foreign_index", "raise_output_limit_huge",
           "keepalive_replies", "infinite_loop", "memory_bomb", "stack_overflow", "os_exit",
           "kernel_side_doors", "capture_flood", "bash_flood"]


def grader_for(attack: str):  # type: ignore[no-untyped-def]
    if attack == "bash_flood":
        return BashGrader(key="g", command=BASH_FLOOD, timeout_seconds=20)
    source = CAPTURE_FLOOD if attack == "capture_flood" else (CORPUS / f"{attack}.py").read_text()
    return corpus_grader(source, "g")


@pytest.mark.parametrize("attack", ATTACKS)
def test_nineteen_honest_scores_and_one_clear_error(library: Library, attack: str) -> None:
    library.graders.create(grader_for(attack))
    memory = PeakGrowth().mark()
    library.datasets.create("d", [
        Sample(id="evil" if i == EVIL else f"s{i}", messages=[Turn(role="user", content="What is 2+2?")],
               completion="4", expected="4", metadata={"evil": i == EVIL}) for i in range(20)])
    info = run_grader(library, "g", "d", RunOptions())
    assert info.status == "completed", info
    assert info.counts == {"ok": 19, "error": 1}, info.counts
    rows = library.runs.results(info.id)
    assert [r["score"] for r in rows if r["sample_id"] != "evil"] == [1.0] * 19
    [evil] = [r for r in rows if r["sample_id"] == "evil"]
    assert evil["status"] == "error" and evil["error"] and "Traceback" not in evil["error"]
    assert len(evil["error"]) < 2100
    grown = memory.mb()
    assert grown < GROWTH_LIMIT_MB, f"studio peak RSS grew {grown:.0f} MB"
