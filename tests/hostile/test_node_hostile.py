"""Hostile JavaScript graders (promptfoo javascript assertions) are contained by the Node sandbox:
no host file, no network, no child process, no secret; a spin or a memory bomb ends as that
sample's error while the honest samples of the batch still score."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest
from platforms_env import needs_node, unavailable

from studio.core.graders.javascript import JavascriptScorer
from studio.core.models import JavascriptGrader, Outcome, Sample
from studio.core.sandbox.node import node_info
from studio.core.scoring import GradingContext

SECRET = "sk-node-secret"


def run(source: str, samples: list[Sample] | None = None, *, form: str = "module", timeout: float = 5,
        memory_mb: int = 128) -> list[Outcome]:
    needs_node()
    grader = JavascriptGrader(key="hostile", source=source, form=form, timeout_seconds=timeout, memory_mb=memory_mb)
    scorer = JavascriptScorer(grader, GradingContext(concurrency=1))
    try:
        return scorer.score_sync(samples or [Sample(id="s", completion="x", expected="x")])
    finally:
        scorer.close()


@pytest.fixture
def secret_in_env() -> Iterator[None]:
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    yield
    if before is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = before


def reason(outcome: Outcome) -> str:
    return outcome.rationale or outcome.error or ""


# A grader that reports what it got as its reason: pass=true means the attack worked.
ATTEMPT = """
module.exports = async (output, context) => {
  try {
    const got = await (async () => { %s })();
    return { pass: true, score: 1, reason: 'ESCAPED: ' + String(got).slice(0, 200) };
  } catch (err) {
    return { pass: false, score: 0, reason: 'contained: ' + (err && (err.code || err.message)) };
  }
};
"""

ATTACKS = {
    "read_shadow": "return require('fs').readFileSync('/etc/shadow', 'utf8')",
    "read_passwd": "return require('fs').readFileSync('/etc/passwd', 'utf8')",
    "list_home": "return require('fs').readdirSync('/root').concat(require('fs').readdirSync('/home')).join(',')",
    "write_outside_tmp": "require('fs').writeFileSync('/usr/escaped', 'x'); return 'written'",
    "exec_sync": "return require('child_process').execSync('id').toString()",
    "spawn_sync": "const r = require('child_process').spawnSync('/bin/sh', ['-c', 'id']); if (r.error) throw r.error; return r.stdout",
    "fork": "const c = require('child_process').fork('/sandbox/js/harness.js'); return await new Promise((ok, no) => { c.on('error', no); c.on('spawn', () => ok('spawned')); })",
    "fetch": "const r = await fetch('http://1.1.1.1/'); return r.status",
    "dns": "return await require('dns').promises.lookup('example.com')",
    # node is dumpable after its exec: its own memory must still not be writable (Landlock)
    "patch_own_memory": "const fd = require('fs').openSync('/proc/self/mem', 'r+'); return 'opened ' + fd",
    "write_own_environ": "require('fs').writeFileSync('/proc/self/attr/current', 'x'); return 'written'",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_is_contained(name: str) -> None:
    if name == "patch_own_memory" and not node_info().landlock:
        unavailable("this kernel has no Landlock, so node could write its own memory (sandbox-info says so)")
    [outcome] = run(ATTEMPT % ATTACKS[name])
    assert outcome.status == "ok", outcome
    assert outcome.details.get("pass") is False, reason(outcome)
    assert reason(outcome).startswith("contained"), reason(outcome)


def test_host_loopback_is_unreachable() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    attack = ("return await new Promise((ok, no) => { const s = require('net').connect(" + str(port) +
              ", '127.0.0.1'); s.on('connect', () => ok('connected')); s.on('error', no); })")
    try:
        [outcome] = run(ATTEMPT % attack)
    finally:
        stop.set()
        thread.join()
        server.close()
    assert outcome.details.get("pass") is False, reason(outcome)
    assert not accepted


def test_environment_holds_no_secret(secret_in_env: None) -> None:
    [outcome] = run(ATTEMPT % "return JSON.stringify(process.env)")
    env = reason(outcome)
    assert SECRET not in env and "OPENAI_API_KEY" not in env
    assert outcome.details.get("pass") is True  # the environment is readable, and empty of secrets


def test_spin_forever_is_that_samples_wall_time_error() -> None:
    samples = [Sample(id="a", completion="ok"), Sample(id="b", completion="spin"), Sample(id="c", completion="ok")]
    out = run("if (output === 'spin') { while (true) {} }\nreturn true", samples, form="inline", timeout=2)
    assert [o.status for o in out] == ["ok", "error", "ok"]
    assert "wall-time limit" in (out[1].error or "")
    assert out[0].score == out[2].score == 1.0


def test_memory_bomb_is_that_samples_error() -> None:
    samples = [Sample(id="a", completion="ok"), Sample(id="b", completion="bomb")]
    source = "if (output === 'bomb') { const a = []; while (true) a.push(new Array(1e6).fill(1.5)); }\nreturn true"
    out = run(source, samples, form="inline", timeout=20, memory_mb=64)
    assert out[0].score == 1.0
    assert out[1].status == "error", out[1]


def test_buffer_bomb_outside_the_heap_is_stopped() -> None:
    source = "const a = [];\nwhile (true) a.push(Buffer.alloc(64 * 1024 * 1024, 1));\nreturn true"
    [outcome] = run(source, form="inline", timeout=20, memory_mb=64)
    assert outcome.status == "error" or outcome.details.get("pass") is False, outcome


def test_worker_thread_bomb_is_bounded() -> None:
    """Threads are allowed (Node needs them) but bounded: RLIMIT_NPROC and the address space stop a
    grader that starts worker threads without end."""
    source = """
const { Worker } = require('worker_threads');
module.exports = async () => {
  const made = [];
  try {
    for (let i = 0; i < 10000; i++) {
      const w = new Worker('setInterval(() => {}, 1000)', { eval: true });
      await new Promise((ok, no) => { w.once('online', ok); w.once('error', no); });
      made.push(w);
    }
  } catch (err) {
    return { pass: false, score: 0, reason: 'contained after ' + made.length + ': ' + err.message };
  }
  return { pass: true, score: 1, reason: 'ESCAPED: made ' + made.length };
};
"""
    [outcome] = run(source, timeout=60, memory_mb=256)
    assert outcome.status == "error" or outcome.details.get("pass") is False, outcome
    assert "ESCAPED" not in reason(outcome)
