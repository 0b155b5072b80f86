"""The worker's request loop: JSON lines in on stdin, JSON lines out on a private copy of stdout.

Results of a batch are buffered and flushed at the end, or every 50 ms when samples are slow, or
after every sample in ``precise`` mode; the parent uses the flushed results to tell which sample
was running when the worker hung or died.
"""

from __future__ import annotations

import json
import os
import sys
import time
import types

from . import confine, contracts, payloads

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep typing out of the worker's start-up
    import asyncio
    import contextvars
    from collections.abc import Callable, Coroutine, Generator
    from typing import BinaryIO

    from studio.core.json_types import JsonArray, JsonObject, JsonValue

    Grading = Coroutine[object, object, object]  # an ``async def grade``'s coroutine


FLUSH_SECONDS = 0.05
FLUSH_BYTES = 1 << 20
#: plain float scores of one message at most (a batch of more is sent in parts)
FLUSH_FLOATS = 8192
CAPTURE_BYTES = 4096
_SCALARS = (float, int, bool, type(None))


class Capture:
    """Stands in for sys.stdout/stderr: keeps the first few KiB a grader prints per sample."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        own = _SAMPLE_CAPTURE.get() if _SAMPLE_CAPTURE is not None else None
        if own is not None and own is not self:  # overlapped samples: each keeps what it printed
            return own.write(text)
        if self.size < CAPTURE_BYTES:
            self.parts.append(str(text)[: CAPTURE_BYTES - self.size])
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def take(self) -> str | None:
        if not self.size:
            return None
        text = "".join(self.parts)
        self.parts, self.size = [], 0
        return text


class _Resume:
    """Continues a coroutine that already yielded once, so an event loop can finish it."""

    def __init__(self, coro: Grading, first: object) -> None:
        self.coro, self.first = coro, first

    def __await__(self) -> Generator[object, object, object]:
        coro, out = self.coro, self.first
        while True:
            try:
                sent = yield out
            except BaseException as exc:  # noqa: BLE001 - forwarded into the grader
                try:
                    out = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    out = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


class Worker:
    def __init__(self, out_fd: int, in_file: BinaryIO) -> None:
        self.out_fd = out_fd
        self.inp = in_file
        self.capture = Capture()
        self.call: Callable[[JsonObject], object] | None = None
        self.contract = ""
        self.output_limit = 65536
        self.model_ctx: contracts.ModelContext | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.buf: list[JsonArray] = []
        self.buf_bytes = 0
        #: plain finite float scores of the batch, index ``floats_at`` onwards (None: that index's
        #: result is an entry in ``buf``): sent as one JSON array of numbers, not a list per sample
        self.floats: list[float | None] = []
        self.floats_at = 0
        self.request_id: JsonValue = None
        self.own_pid_ns = False
        #: samples of one batch an ``async def`` grader may run at once (the load request's "overlap")
        self.overlap = 1
        self.is_async = False

    # -- plumbing ---------------------------------------------------------------------------
    def send(self, message: JsonObject) -> None:
        data = (json.dumps(message, separators=(",", ":"), allow_nan=True) + "\n").encode()
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]

    def flush(self) -> None:
        if self.floats:
            self.send({"id": self.request_id, "r": self.buf, "at": self.floats_at, "f": self.floats})
            self.buf, self.buf_bytes, self.floats = [], 0, []
        elif self.buf:
            self.send({"id": self.request_id, "r": self.buf})
            self.buf, self.buf_bytes = [], 0

    def bridge(self, kind: str, payload: JsonObject) -> JsonValue:
        self.flush()
        self.send({"op": "model", "id": self.request_id, "kind": kind, "payload": payload})
        line = self.inp.readline()
        reply = json.loads(line) if line else {"ok": False, "error": "no reply from the studio"}
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("error") or "model call failed"))
        return reply.get("result")

    # -- requests ---------------------------------------------------------------------------
    def load(self, req: JsonObject) -> JsonObject:
        confine.set_limit("RLIMIT_AS", _vm_bytes() + int(req.get("memory_mb", 512)) * 1024 * 1024)
        used = int(sum(os.times()[:2]))
        confine.set_limit("RLIMIT_CPU", used + int(req.get("cpu_seconds", 600)))
        self.output_limit = int(req.get("output_limit", 65536))
        self.contract = req["contract"]
        source, filename = req["source"], "grader.py"
        try:
            code = compile(source, filename, "exec")
        except SyntaxError as exc:
            return {"ok": False, "stage": "syntax", "error": f"{exc.msg}", "line": exc.lineno}
        except (MemoryError, RecursionError, ValueError) as exc:  # too big or too deep to compile
            return {"ok": False, "stage": "syntax", "error": f"cannot compile the grader: {type(exc).__name__}", "line": None}
        namespace: dict[str, object] = {"__name__": "grader", "__file__": filename, "__builtins__": __builtins__}
        try:
            exec(code, namespace)  # noqa: S102 - this is the sandbox
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "stage": "execution", **_describe(exc, filename)}
        finally:
            self.capture.take()
        try:
            fn = contracts.find_entry(namespace, self.contract, req.get("function"))
        except contracts.LoadError as exc:
            return {"ok": False, "stage": "structure", "error": str(exc), "line": None}
        self.model_ctx = contracts.ModelContext(
            self.bridge, bool(req.get("model_access")), int(req.get("max_model_calls", 64))
        )
        self.call = contracts.make_caller(self.contract, fn, self.model_ctx)
        self.is_async = bool(getattr(getattr(fn, "__code__", None), "co_flags", 0) & 0x80)
        self.overlap = 1 if req.get("model_access") else max(1, int(req.get("overlap") or 1))
        if self.is_async and ("asyncio" in sys.modules or "asyncio" in source):
            self._loop()  # an async grader using asyncio: its loop is built now, not in the first sample
        return {
            "ok": True,
            "entry": getattr(fn, "__name__", "?"),
            "params": contracts.positional_count(fn),
            "is_async": bool(getattr(getattr(fn, "__code__", None), "co_flags", 0) & 0x80),
        }

    def drive(self, coro: Grading) -> object:
        """Finish an ``async def grade``. A grader that uses asyncio (it imported it) runs inside an
        event loop from its first step, so ``asyncio.sleep``, ``gather`` or the running loop work;
        one that never touched asyncio is stepped directly (no loop to build, asyncio never loads)
        and handed to a loop only if it suspends."""
        if self.loop is not None or "asyncio" in sys.modules:
            return self._loop().run_until_complete(coro)
        try:
            first = coro.send(None)
        except StopIteration as stop:
            return stop.value
        return self.finish(coro, first)

    def finish(self, coro: Grading, first: object) -> object:
        """The rest of a coroutine that suspended at its first step (yielding ``first``), in a loop."""

        async def rest() -> object:
            return await _Resume(coro, first)

        return self._loop().run_until_complete(rest())

    def _loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            import asyncio

            self.loop = asyncio.new_event_loop()
        return self.loop

    def run_one(self, index: int, payload: JsonValue, build: Callable[[JsonValue], JsonValue] | None = None) -> JsonArray:
        call = self.call
        assert call is not None
        if self.model_ctx is not None:
            self.model_ctx.calls = 0
        try:
            value = call(payload if build is None else build(payload))
            if type(value) is types.CoroutineType:
                value = self.drive(value)
            value = contracts.to_payload(value)
        except BaseException as exc:  # noqa: BLE001 - any failure is this sample's error
            return _failure(index, exc)
        return self._entry(index, value)

    def grade(self, req: JsonObject) -> None:
        self.request_id = req.get("id")
        precise = bool(req.get("precise"))
        samples = req["samples"]
        # "raw": the samples are stored sample JSON, shaped here for the contract (studio_guest.payloads)
        # a sample's payload from its stored JSON, or (whole) the list of payloads from the list
        build: Callable[[JsonValue], JsonValue] | None = payloads.builder(self.contract) if req.get("raw") else None
        limit = self.output_limit
        if req.get("whole"):  # MKA1 grade_batch: the whole list is one call, its result may be
            self.output_limit = limit * max(1, len(samples))  # per-sample-sized for each sample
            samples = [samples]
            if build is not None:
                one = build
                build = lambda batch: [one(s) for s in batch]  # noqa: E731
        if self.is_async and self.overlap > 1 and not precise and not req.get("whole"):
            self.grade_overlapped(samples, build)
            self.flush()
            self.send({"id": self.request_id, "done": True, "cpu": sum(os.times()[:2]), "strays": _kill_strays(self.own_pid_ns)})
            return
        capture = self.capture
        clock = time.monotonic
        last = clock()
        call = self.call
        model_ctx = self.model_ctx
        coroutine = types.CoroutineType
        to_payload = contracts.to_payload
        modules = sys.modules
        for index, payload in enumerate(samples):
            # run_one inlined: a plain finite float with nothing printed (a fast grader's every
            # sample) joins the batch's float array instead of becoming an entry of its own
            if model_ctx is not None:
                model_ctx.calls = 0
            try:
                value = call(payload if build is None else build(payload))  # type: ignore[misc]
                if type(value) is coroutine:
                    if self.loop is None and "asyncio" not in modules:  # drive()'s first step, inline
                        try:
                            first = value.send(None)
                        except StopIteration as stop:
                            value = stop.value
                        else:
                            value = self.finish(value, first)
                    else:
                        value = self.drive(value)
                if type(value) is not float:
                    value = to_payload(value)
            except BaseException as exc:  # noqa: BLE001 - any failure is this sample's error
                entry: JsonArray | None = _failure(index, exc)
            else:
                if type(value) is float and value - value == 0.0 and not capture.size:
                    floats = self.floats  # not a local: a model call in the grader flushes and renews it
                    if not floats:
                        self.floats_at = index
                    elif gap := index - self.floats_at - len(floats):
                        floats.extend([None] * gap)  # those samples' entries are in buf
                    floats.append(value)
                    entry = None
                else:
                    entry = self._entry(index, value)
            if entry is not None:
                printed = capture.take()
                if printed is not None:
                    entry.append({"printed": printed})
                self.buf.append(entry)  # not a local: a model call in the grader flushes and renews it
            if precise or self.buf_bytes > FLUSH_BYTES or len(self.floats) >= FLUSH_FLOATS:
                self.flush()
            else:
                now = clock()
                if now - last >= FLUSH_SECONDS:
                    self.flush()
                    last = now
        self.output_limit = limit
        self.flush()
        self.send({"id": self.request_id, "done": True, "cpu": sum(os.times()[:2]), "strays": _kill_strays(self.own_pid_ns)})

    def grade_overlapped(self, samples: JsonArray, build: Callable[[JsonValue], JsonValue] | None) -> None:
        """An ``async def`` grader's samples, up to ``overlap`` awaiting at once in one event loop:
        a grader that waits (a sleep, a network call it may make) overlaps inside this one worker
        instead of needing a process per sample. Results are flushed as they finish (every 50 ms)."""
        import asyncio
        import contextvars

        global _SAMPLE_CAPTURE
        if _SAMPLE_CAPTURE is None:
            _SAMPLE_CAPTURE = contextvars.ContextVar("sample_capture", default=None)
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        var = _SAMPLE_CAPTURE
        last = [time.monotonic()]

        async def one(gate: asyncio.Semaphore, index: int, payload: JsonValue) -> None:
            async with gate:
                own = Capture()
                var.set(own)  # this task's context only
                entry = await self.run_one_async(index, payload, build)
                printed = own.take()
                if printed is not None:
                    entry.append({"printed": printed})
                self.buf.append(entry)
                now = time.monotonic()
                if self.buf_bytes > FLUSH_BYTES or now - last[0] >= FLUSH_SECONDS:
                    self.flush()
                    last[0] = now

        async def batch() -> None:
            gate = asyncio.Semaphore(self.overlap)
            await asyncio.gather(*(one(gate, i, p) for i, p in enumerate(samples)))

        self.loop.run_until_complete(batch())

    async def run_one_async(self, index: int, payload: JsonValue, build: Callable[[JsonValue], JsonValue] | None) -> JsonArray:
        """``run_one`` for an awaitable grader inside a running loop (the same error entries)."""
        call = self.call
        assert call is not None
        try:
            value = call(payload if build is None else build(payload))
            if type(value) is types.CoroutineType:
                value = await value
            value = contracts.to_payload(value)
        except BaseException as exc:  # noqa: BLE001 - any failure is this sample's error
            return _failure(index, exc)
        return self._entry(index, value)

    def _entry(self, index: int, value: object) -> JsonArray:
        """A graded sample's result entry (a scalar as is; anything else sized against the limit)."""
        if type(value) in _SCALARS:
            return [index, 0, value]
        try:
            size = len(json.dumps(value, allow_nan=True))
        except (TypeError, ValueError, RecursionError, MemoryError):
            return [index, 2, _safe_repr(value), type(value).__name__]
        if size > self.output_limit:
            return [index, 4, _safe_repr(value)[:1024], size]
        self.buf_bytes += size
        return [index, 0, value]

    def serve(self) -> None:
        while True:
            line = self.inp.readline()
            if not line:
                return
            req = json.loads(line)
            op = req.get("op")
            if op == "grade":
                self.grade(req)
            elif op == "load":
                self.send({"op": "loaded", **self.load(req)})
            elif op == "exit":
                return


#: set on the first overlapped batch (contextvars stays out of the worker's start-up until then)
_SAMPLE_CAPTURE: contextvars.ContextVar[Capture | None] | None = None


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _kill_strays(own_pid_ns: bool) -> int:
    """Processes a grader left behind in our own pid namespace (pid 1 is the sandbox's init)."""
    if not own_pid_ns or not os.path.isdir("/proc"):
        return 0
    me, killed = os.getpid(), 0
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    if 1 not in pids or me == 1:  # not in a pid namespace of our own: never touch the host
        return 0
    for pid in pids:
        if pid not in (1, me):
            try:
                os.kill(pid, 9)
                killed += 1
            except OSError:
                pass
    return killed


def _failure(index: int, exc: BaseException) -> JsonArray:
    """The error entry for a sample whose grader raised (the same for sync and awaited graders)."""
    if isinstance(exc, MemoryError):
        return [index, 3, "MemoryError", "MemoryError"]
    if isinstance(exc, RecursionError):
        return [index, 1, f"RecursionError: {exc}", "RecursionError", _grader_line(exc)]
    if isinstance(exc, SystemExit):
        return [index, 1, f"the grader called sys.exit({exc.code!r})", "SystemExit", None]
    return [index, 1, f"{type(exc).__name__}: {exc}"[:2000], type(exc).__name__, _grader_line(exc)]


def _safe_repr(value: object) -> str:
    try:
        return repr(value)[:1024]
    except BaseException:  # noqa: BLE001
        return f"<unprintable {type(value).__name__}>"


def _grader_line(exc: BaseException) -> int | None:
    import traceback

    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "grader.py":
            line = frame.lineno
    return line


def _describe(exc: BaseException, filename: str) -> JsonObject:
    if isinstance(exc, SystemExit):
        return {"error": f"the module called sys.exit({exc.code!r})", "line": _grader_line(exc)}
    return {"error": f"{type(exc).__name__}: {exc}"[:2000], "line": _grader_line(exc)}


def main(config: JsonObject) -> None:
    out_fd = os.dup(1)
    os.set_inheritable(out_fd, False)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    in_file = os.fdopen(os.dup(0), "rb")
    os.dup2(null, 0)
    os.close(null)
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None and gid is not None:
        confine.drop_privileges(int(uid), int(gid))
    layers = {"no_new_privs": False, "seccomp": False}
    if sys.platform == "linux":
        layers["no_new_privs"] = confine.set_no_new_privs_and_nondumpable()
        if config.get("seccomp", True):
            layers["seccomp"] = confine.install_seccomp()
    confine.set_limit("RLIMIT_NPROC", config.get("nproc"))
    confine.set_limit("RLIMIT_FSIZE", config.get("fsize"))
    confine.set_limit("RLIMIT_CORE", 0)
    confine.set_limit("RLIMIT_NOFILE", 256)
    capture = Capture()
    sys.stdout = sys.stderr = capture
    import adaptive_harmony  # noqa: F401 - warm the shim (asyncio loads only when a grader awaits)

    worker = Worker(out_fd, in_file)
    worker.capture = capture
    worker.own_pid_ns = bool(config.get("own_pid_ns"))
    if config.get("probe"):  # measured before the audit hook so that only OS layers count
        from . import probe

        worker.send({"op": "ready", "pid": os.getpid(), **layers, "probe": probe.report()})
        return
    if config.get("audit_hook", True):
        confine.install_audit_hook()
    worker.send({"op": "ready", "pid": os.getpid(), "uid": os.getuid(), **layers})
    worker.serve()
