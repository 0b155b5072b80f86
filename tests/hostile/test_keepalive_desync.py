"""Issue 33, item 5 (keep-alive desync): a server that writes stray, early, split and repeated
answers never gets a verdict stored on the wrong sample.

The judge server (``net_servers.naming_judge``) names each request's sample in its answer and frames
its answers six ways in turn: plain; followed in the same write by a stray answer for another
sample; its head sent before the request body is read, after two interim answers; dripped in
pieces of 11 bytes (chunked, chunks split); gzip-encoded and split; and sent twice, the copy written
once the next request on the connection has arrived. The hand-written HTTP/1.1 client this
replaced stored other samples' rationales here (s010's on s012 in one run, s053's on s004 in another).
"""

from __future__ import annotations

from judge_helpers import qa
from net_servers import JudgeLog, ThreadServer, naming_judge

from studio.core.engine.runner import RunOptions, run_grader
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store.endpoints import EndpointRepository


def test_stray_early_and_split_answers_leave_every_rationale_on_its_own_sample(library) -> None:
    log = JudgeLog()
    with ThreadServer(naming_judge(log, hostile=True)) as server:
        EndpointRepository.of(library).save(EndpointConfig(
            name="judge", base_url=f"http://127.0.0.1:{server.port}/v1", model="judge",
            retry_backoff=0.01, timeout=10.0, max_concurrency=8))
        library.graders.create(BinaryJudge(key="named", criteria="c", endpoint="judge"))
        library.datasets.create("d", [qa(f"s{i:03d}", "q", f"answer for SAMPLE-s{i:03d}")
                                      for i in range(60)])
        run = run_grader(library, "named", "d", RunOptions(concurrency=8, use_cache=False))
        rows = library.runs.results(run.id)
    assert len(rows) == 60
    for row in rows:
        assert row["status"] == "ok", row["error"]
        assert row["rationale"].endswith(f"SAMPLE-{row['sample_id']}"), (row["sample_id"],
                                                                          row["rationale"])
    # every framing was used (six in turn over 60 answers), with repeated copies on top
    assert log.answered >= 60
