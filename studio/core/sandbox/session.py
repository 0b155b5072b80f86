"""One grader loaded into one worker, and the recovery rules when a batch goes wrong.

When a worker dies or hangs mid-batch the samples it reported are kept; the rest run again on a
fresh worker in *precise* mode (results flushed one by one), so the first sample without a result is
exactly the one that broke the limit: it alone gets the error, the others still score.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import cast

from studio.core.json_types import JsonArray, JsonObject
from studio.core.models import MAX_SOURCE_BYTES, FunctionGrader
from studio.core.scoring import ModelBridge

from .launch import SandboxRefused
from .pool import WorkerPool
from .process import WorkerDied, WorkerProcess
from .results import LIMIT, MEMORY, NOT_LOADED, OK
from .settings import SandboxSettings

RECYCLE_CPU_SECONDS = 120.0
LOAD_GRACE_SECONDS = 0.5
#: RLIMIT_CPU of a worker beyond its recycling point: a busy loop cannot hold a core much longer
#: than the wall deadline, even if the studio's watchdog were stuck
CPU_GRACE_SECONDS = 5


@dataclass(frozen=True)
class GraderSpec:
    """What a worker needs to run a grader, with the per-call limits."""

    source: str
    contract: str
    function_name: str | None = None
    timeout: float = 30.0
    memory_mb: int = 512
    model_access: bool = False
    max_model_calls: int = 64
    output_kib: int = 64
    #: samples of a batch an ``async def`` grader may await at once inside one worker
    overlap: int = 1

    @classmethod
    def of(cls, grader: FunctionGrader, settings: SandboxSettings, overlap: int = 1) -> GraderSpec:
        return cls(
            overlap=overlap,
            source=grader.source,
            contract=grader.contract,
            function_name=grader.function_name,
            timeout=grader.timeout_seconds,
            memory_mb=grader.memory_mb,
            model_access=grader.model_access,
            max_model_calls=grader.max_model_calls,
            output_kib=settings.output_kib,
        )

    def load_request(self) -> JsonObject:
        return {
            "source": self.source,
            "contract": self.contract,
            "function": self.function_name,
            "memory_mb": self.memory_mb,
            "cpu_seconds": math.ceil(self.timeout) + int(RECYCLE_CPU_SECONDS) + CPU_GRACE_SECONDS,
            "output_limit": self.output_kib * 1024,
            "model_access": self.model_access,
            "max_model_calls": self.max_model_calls,
            "overlap": self.overlap,
        }


class GraderSession:
    def __init__(self, pool: WorkerPool, spec: GraderSpec, bridge: ModelBridge | None = None) -> None:
        self.pool = pool
        self.spec = spec
        self.bridge = bridge
        self.worker: WorkerProcess | None = None
        self.load_error: JsonObject | None = None
        self.loaded: JsonObject | None = None
        self.restarts = 0

    def _ensure_worker(self) -> WorkerProcess | None:
        if self.load_error is not None:
            return None
        size = len(self.spec.source.encode("utf-8", "replace"))
        if size > MAX_SOURCE_BYTES:
            self.load_error = {"ok": False, "stage": "size", "line": None,
                               "error": f"the grader source is {_size(size)}; the limit is {MAX_SOURCE_BYTES // 1024} KiB"}
            return None
        if self.worker is not None and self.worker.alive:
            return self.worker
        if self.worker is not None:
            self.pool.release(self.worker)
            self.worker = None
        try:
            worker = self.pool.acquire()
        except SandboxRefused as exc:
            self.load_error = {"ok": False, "stage": "sandbox", "error": str(exc), "line": None}
            return None
        try:
            reply = worker.load(
                self.spec.load_request(),
                timeout=self.spec.timeout + LOAD_GRACE_SECONDS,
                start_timeout=self.pool.settings.start_timeout,
            )
        except WorkerDied as exc:
            self.pool.release(worker)
            self.load_error = {"ok": False, "stage": "sandbox", "error": str(exc), "line": None}
            return None
        if not reply.get("ok"):
            self.pool.release(worker)
            self.load_error = reply
            return None
        self.loaded = reply
        self.worker = worker
        return worker

    def load(self) -> JsonObject:
        """Load now (validation wants the module-body outcome on its own)."""
        self._ensure_worker()
        return self.load_error or self.loaded or {"ok": False, "error": "not loaded"}

    def _drop_worker(self) -> None:
        if self.worker is not None:
            self.pool.release(self.worker)
            self.worker = None
            self.restarts += 1

    def _model_handler(self, pending: list[int]) -> Callable[[str, JsonObject, int], JsonObject]:
        counts: dict[int, int] = {}

        def handle(kind: str, payload: JsonObject, local: int) -> JsonObject:
            if self.bridge is None:
                return {"ok": False, "error": "model access not configured"}
            index = pending[local] if 0 <= local < len(pending) else -1
            counts[index] = counts.get(index, 0) + 1
            if counts[index] > self.spec.max_model_calls:
                return {"ok": False, "error": f"max_model_calls ({self.spec.max_model_calls}) exceeded"}
            try:
                return {"ok": True, "result": self.bridge(kind, payload)}
            except Exception as exc:  # noqa: BLE001 - becomes an exception inside the grader
                return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

        return handle

    def run(
        self, payloads: JsonArray, *, whole: bool = False, cancel: threading.Event | None = None,
        raw: bool = False,
    ) -> list[JsonArray]:
        """One raw entry [index, status, value, ...] per payload (or one entry when ``whole``);
        after a cancel the samples not yet graded get a "cancelled" error. ``raw``: the payloads are
        stored sample JSON texts that the worker shapes for the contract itself."""
        return [r if isinstance(r, list) else [i, OK, r]
                for i, r in enumerate(self.run_scores(payloads, whole=whole, cancel=cancel, raw=raw))]

    def run_scores(
        self, payloads: JsonArray, *, whole: bool = False, cancel: threading.Event | None = None,
        raw: bool = False,
    ) -> list[JsonArray | float]:
        """``run`` with a plain finite float score left as that float instead of its entry
        [index, OK, score] (a run's hot path: no list per sample). Item i is sample i's."""
        n = 1 if whole else len(payloads)
        return self._run(payloads, list(range(n)), n, whole=whole, cancel=cancel, raw=raw, precise=False)

    def _run(
        self, payloads: JsonArray, pending: list[int], n: int, *, whole: bool, cancel: threading.Event | None,
        raw: bool, precise: bool, fan_out: bool = True,
    ) -> list[JsonArray | float]:
        results: list[JsonArray | float | None] = [None] * n
        while pending:
            worker = self._ensure_worker()
            if worker is None:
                error = self._load_message()
                for i in pending:
                    results[i] = [i, NOT_LOADED, error, "load"]
                break
            batch = payloads if whole else [payloads[i] for i in pending]
            reply = worker.grade(
                batch,
                timeout=self.spec.timeout,
                precise=precise,
                whole=whole,
                on_model=self._model_handler(pending),
                memory_mb=self.spec.memory_mb,
                cancel=cancel,
                raw=raw,
                output_bytes=self.spec.output_kib * 1024,
            )
            if len(pending) == n and not whole:  # the first round: local indices are the batch's
                results = list(map(reply.results.get, range(n)))  # (wire.py: each index inside the batch)
            else:
                for local, entry in reply.results.items():
                    if type(entry) is list:
                        entry[0] = pending[local]
                    results[pending[local]] = entry
            if reply.failure is None:
                # (what the batch holds, told in C: a run's batch is all floats, no entry to look at)
                kinds = set(map(type, results))
                if reply.strays or reply.cpu_seconds > RECYCLE_CPU_SECONDS or (list in kinds and any(
                    type(graded := results[i]) is list and graded[1] == MEMORY for i in pending
                )):
                    self._drop_worker()
                missing = [i for i in pending if results[i] is None] if type(None) in kinds else []
                for i in missing:
                    results[i] = [i, LIMIT, "the worker returned no result for this sample", "protocol"]
                break
            self._drop_worker()
            remaining = [i for i in pending if results[i] is None]
            if reply.failure.kind == "cancelled":
                for i in remaining:
                    results[i] = [i, LIMIT, "cancelled", "cancelled"]
                break
            if remaining and (precise or len(remaining) == 1):
                culprit = remaining.pop(0)
                results[culprit] = [culprit, LIMIT, reply.failure.message, reply.failure.kind]
            precise = True
            pending = remaining
            if fan_out and not whole and reply.failure.kind == "timeout" and len(pending) > 1 and self.pool.size > 1:
                # a hung grader: the suspects run on several fresh workers at once, so timeouts on
                # different samples are waited for in parallel, not one after another
                for entry in self._fan_out(payloads, pending, n, cancel, raw):
                    results[entry[0]] = entry
                break
        if type(None) not in map(type, results):  # (the usual batch: no sample left without its result)
            return cast(list[JsonArray | float], results)
        return [r for r in results if r is not None]

    def _fan_out(self, payloads: JsonArray, pending: list[int], n: int, cancel: threading.Event | None,
                 raw: bool) -> list[JsonArray]:
        ways = min(self.pool.size, len(pending))
        chunks = [pending[i::ways] for i in range(ways)]
        helpers = [GraderSession(self.pool, self.spec, self.bridge) for _ in chunks]
        try:
            with ThreadPoolExecutor(max_workers=ways, thread_name_prefix="sandbox-fan-out") as threads:
                parts = list(threads.map(
                    lambda pair: pair[0]._run(payloads, pair[1], n, whole=False, cancel=cancel, raw=raw,
                                              precise=True, fan_out=False),
                    zip(helpers, chunks, strict=True)))
        finally:
            for helper in helpers:
                self.restarts += helper.restarts
                helper.close()
        return [entry if isinstance(entry, list) else [i, OK, entry]
                for part, chunk in zip(parts, chunks, strict=True) for i, entry in zip(chunk, part, strict=True)]

    def _load_message(self) -> str:
        if (self.load_error or {}).get("stage") in ("size", "sandbox"):
            return str((self.load_error or {}).get("error"))
        err = self.load_error or {}
        stage = err.get("stage", "load")
        line = f" (line {err['line']})" if err.get("line") else ""
        return f"grader failed to load [{stage}]{line}: {err.get('error')}"

    def close(self) -> None:
        if self.worker is not None:
            self.pool.release(self.worker)
            self.worker = None


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KiB"
