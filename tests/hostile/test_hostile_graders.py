"""Every grader of the hostile corpus is contained: the attacking sample gets a clear error (or an
invalid mark) and the honest samples around it in the same batch still score."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from hostile_corpus import CORPUS, corpus_grader, header

from studio.core.models import FunctionGrader, Outcome, Sample, Turn
from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.scorer import FunctionScorer
from studio.core.scoring import GradingContext

CORPUS_FILES = sorted(CORPUS.glob("*.py"))
HOME = pwd.getpwuid(os.getuid()).pw_dir


class Listener:
    """A real TCP server on the host loopback: the sandbox must not reach it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def samples(extra: dict[str, Any]) -> list[Sample]:
    def one(sid: str, evil: bool) -> Sample:
        return Sample(
            id=sid,
            messages=[Turn(role="user", content="What is 2+2?")],
            completion="4",
            expected="4",
            metadata={"evil": evil, **extra} if evil else {},
        )

    return [one("good-1", False), one("evil", True), one("good-2", False)]


def run(pool: WorkerPool, source: str, extra: dict[str, Any] | None = None) -> list[Outcome]:
    grader = corpus_grader(source, "hostile")
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": pool}))
    try:
        return scorer.score_sync(samples(extra or {}))
    finally:
        scorer.close()


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_hostile_grader_is_contained(hostile_pool: WorkerPool, path: Path, tmp_path: Path) -> None:
    source = path.read_text()
    host_file = tmp_path / "library.sqlite"
    host_file.write_text("the user's library")
    listener = Listener()
    try:
        outcomes = run(hostile_pool, source, {"port": listener.port, "home": HOME, "host_file": str(host_file)})
    finally:
        listener.close()
    good_1, evil, good_2 = outcomes
    assert (good_1.status, good_1.score) == ("ok", 1.0), good_1
    assert (good_2.status, good_2.score) == ("ok", 1.0), good_2
    expected = header(source, "expect")
    assert evil.status == expected, evil
    if expected == "ok":
        assert len(evil.details.get("printed", "")) <= 4096
    else:
        assert header(source, "message") in (evil.error or ""), evil.error
        if expected == "invalid":
            assert evil.score == 0.0
    assert listener.accepted == 0
    assert not Path(HOME, "grader-studio-pwned").exists()
    assert not Path("/tmp/pwned").exists() and not Path("/tmp/escaped").exists()


def test_the_corpus_is_big_enough() -> None:
    assert len(CORPUS_FILES) >= 15


def test_a_patched_shim_does_not_reach_the_next_grader(hostile_pool: WorkerPool) -> None:
    liar = (CORPUS / "monkeypatch_shim.py").read_text()
    run(hostile_pool, liar)
    honest = "async def grade(thread):\n    return 1.0 if thread.completion() == '4' else 0.0\n"
    grader = FunctionGrader(key="honest", source=honest, timeout_seconds=1)
    scorer = FunctionScorer(grader, GradingContext(options={"sandbox_pool": hostile_pool}))
    try:
        wrong = Sample(id="x", messages=[Turn(role="user", content="q")], completion="5")
        right = Sample(id="y", messages=[Turn(role="user", content="q")], completion="4")
        assert [o.score for o in scorer.score_sync([wrong, right])] == [0.0, 1.0]
    finally:
        scorer.close()


def test_files_written_inside_stay_inside(hostile_pool: WorkerPool) -> None:
    writer = (
        "import os\n"
        "async def grade(thread):\n"
        "    with open('/tmp/inside.txt', 'w') as fh:\n"
        "        fh.write('x')\n"
        "    return float(os.path.exists('/tmp/inside.txt'))\n"
    )
    outcomes = run(hostile_pool, writer)
    assert [o.score for o in outcomes] == [1.0, 1.0, 1.0]
    assert not Path("/tmp/inside.txt").exists()


def test_the_suite_runs_in_the_mode_it_means_to() -> None:
    """CI runs this suite twice: with bubblewrap, then with bwrap hidden from PATH
    (GRADER_STUDIO_EXPECT_MODE=namespaces); a silent fall to a weaker mode would test nothing."""
    from studio.core.sandbox.launch import detect_mode, namespaces_unavailable

    expected = os.environ.get("GRADER_STUDIO_EXPECT_MODE") or ("bubblewrap" if shutil.which("bwrap") else None)
    if expected is None:  # no bwrap and no declared mode: the strongest this machine has
        expected = "namespaces" if namespaces_unavailable() is None else "limits_only"
    assert detect_mode() == expected
