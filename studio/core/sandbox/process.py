"""One worker process seen from the studio: start it, load a grader, send batches, kill it.

Blocking calls with deadlines (select on the pipe), so the same handle serves the async scorer
(through a thread) and the synchronous validator. A worker that misses a deadline, dies, floods its
output or breaks the protocol is killed here and the caller learns what happened as a ``Failure``.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.core.json_types import JsonArray, JsonObject

from . import wire
from .launch import LaunchPlan

#: what a worker may send outside a batch (ready, loaded): a few small fields and an error text
CONTROL_LINE_BYTES = 256 * 1024

ModelHandler = Callable[[str, JsonObject, int], JsonObject]


CANCEL_POLL_SECONDS = 0.1


class Cancelled(Exception):
    """The user cancelled while a batch was running."""


class WorkerDied(Exception):
    """The worker could not be started or answered nonsense outside a batch."""


@dataclass
class Failure:
    """Why a batch stopped early: ``limit`` names the limit or the crash for the sample's error."""

    kind: str  # timeout | crash | output | protocol
    message: str


@dataclass
class BatchReply:
    #: by the sample's index in the batch: its checked entry [index, status, value, ...], or for a
    #: plain finite float score (the common case) that float alone
    results: dict[int, JsonArray | float] = field(default_factory=dict)
    failure: Failure | None = None
    cpu_seconds: float = 0.0
    strays: int = 0


def describe_exit(code: int | None, memory_mb: int | None = None) -> str:
    """A sentence for how a worker ended (bwrap reports a signal death as 128 + signal)."""
    if code is None:
        return "the worker stopped answering"
    sig = -code if code < 0 else code - 128 if code > 128 else 0
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if name == "SIGXCPU":
            return "CPU time limit exceeded (SIGXCPU)"
        if name == "SIGKILL":
            extra = f" (memory limit {memory_mb} MB?)" if memory_mb else ""
            return f"the worker was killed (SIGKILL){extra}"
        if name == "SIGSEGV":
            return "the worker crashed (SIGSEGV: stack overflow or memory corruption)"
        return f"the worker died from {name}"
    return f"the worker exited with code {code} (os._exit or a fatal error in the grader)"


def _prctl() -> Callable[..., int] | None:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl() if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    """In the child between fork and exec: SIGKILL when the parent goes (PR_SET_PDEATHSIG)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL, 0, 0, 0)


def _raw_request(rid: int, texts: list[str], precise: bool, whole: bool) -> bytes:
    """A grade request whose samples are JSON texts already (one line each, as stored): joined into
    the message instead of parsed and encoded again."""
    body = ",".join(texts)
    if "\n" in body:  # compact JSON never holds a raw newline; anything else goes through a parse
        body = ",".join(json.dumps(json.loads(t), separators=(",", ":"), allow_nan=True) for t in texts)
    head = json.dumps({"op": "grade", "id": rid, "precise": precise, "whole": whole, "raw": True},
                      separators=(",", ":"))
    return (head[:-1] + ',"samples":[' + body + "]}\n").encode()


class WorkerProcess:
    def __init__(self, plan: LaunchPlan) -> None:
        self.plan = plan
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        self.proc = subprocess.Popen(
            plan.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=plan.env,
            cwd=plan.cwd,
            close_fds=True,
            start_new_session=True,
            # bwrap has --die-with-parent; unshare has nothing of the kind: the kernel kills it
            # (and --kill-child its namespace) when the thread that started it ends
            preexec_fn=_die_with_parent if plan.mode == "namespaces" else None,
        )
        self._buf = bytearray()
        self.ready: JsonObject | None = None
        self.loaded: JsonObject | None = None
        self.cpu_seconds = 0.0
        self.started = time.monotonic()
        self._next_id = 0

    # -- low level ------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _write(self, message: JsonObject) -> None:
        self._write_bytes((json.dumps(message, separators=(",", ":"), allow_nan=True) + "\n").encode())

    def _write_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _read_line(self, deadline: float, cancel: threading.Event | None = None,
                   limit: int = CONTROL_LINE_BYTES) -> bytes | None:
        """One line, or None at the deadline; raises EOFError when the worker's output ends,
        OverflowError when the line grows past ``limit`` bytes (never more than ``limit`` plus one
        read is held) and Cancelled when ``cancel`` is set while waiting."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            if len(self._buf) > limit:
                raise OverflowError(f"a message over {limit} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if cancel is not None:
                if cancel.is_set():
                    raise Cancelled
                remaining = min(remaining, CANCEL_POLL_SECONDS)
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, min(1 << 20, limit + 1 - len(self._buf)))
            if not chunk:
                raise EOFError
            self._buf += chunk

    def stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-2000:].decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def wait_ready(self, timeout: float) -> JsonObject:
        if self.ready is not None:
            return self.ready
        try:
            line = self._read_line(time.monotonic() + timeout)
        except (EOFError, OverflowError):
            line = None
        if line is None:
            detail = self.stderr_tail()
            code = self.proc.poll()
            self.kill()
            if code is not None:
                detail = f"{describe_exit(code)}; {detail}" if detail else describe_exit(code)
            raise WorkerDied(f"sandbox worker did not start{': ' + detail if detail else ''}")
        try:
            message = wire.loads(line)
        except wire.ProtocolError:
            message = None
        if not isinstance(message, dict) or message.get("op") != "ready":
            self.kill()
            raise WorkerDied("the sandbox worker sent something else than its ready message")
        self.ready = message
        return message

    def kill(self) -> None:
        """Kill the worker's whole process group (bwrap and what it started: no orphan is left
        behind to be adopted by pid 1) and reap it."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()
        for path in self.plan.cleanup:
            shutil.rmtree(path, ignore_errors=True)

    def _exit_message(self, memory_mb: int | None) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        return describe_exit(code, memory_mb)

    # -- requests -------------------------------------------------------------------------------
    def load(self, request: JsonObject, timeout: float, start_timeout: float) -> JsonObject:
        """Send the grader; returns the worker's answer ({ok, stage, error, line} on failure)."""
        self.wait_ready(start_timeout)
        try:
            self._write({"op": "load", **request})
            line = self._read_line(time.monotonic() + timeout)
        except (EOFError, OverflowError, BrokenPipeError):
            message = self._exit_message(request.get("memory_mb"))
            self.kill()
            return {"ok": False, "stage": "execution", "error": message, "line": None}
        if line is None:
            self.kill()
            limit = f"wall-time limit ({timeout:g} s) exceeded while running the module body"
            return {"ok": False, "stage": "execution", "error": limit, "line": None}
        try:
            reply = wire.loads(line)
        except wire.ProtocolError:
            reply = None
        if not isinstance(reply, dict) or reply.get("op") != "loaded":
            self.kill()
            return {"ok": False, "stage": "execution", "error": "the grader wrote into the sandbox channel "
                    "while loading", "line": None}
        reply = _checked_load_reply(reply)
        if reply.get("ok"):
            self.loaded = reply
        return reply

    def grade(
        self,
        samples: JsonArray | list[str],
        *,
        timeout: float,
        precise: bool = False,
        whole: bool = False,
        on_model: ModelHandler | None = None,
        memory_mb: int | None = None,
        cancel: threading.Event | None = None,
        raw: bool = False,
        output_bytes: int = 64 * 1024,
    ) -> BatchReply:
        """Run one batch. ``timeout`` is the per-sample wall limit, a hard deadline: a sample has
        ``timeout`` seconds from the moment the previous one reported (the batch's start for the
        first); only a new result moves the deadline on, never an empty or repeated message, and the
        whole batch never gets more than ``timeout`` per sample. Time the studio spends answering a
        model call is not the grader's. Every line is checked (``wire``): a malformed one fails the
        batch as a protocol error. ``raw``: the samples are stored sample JSON texts, spliced into
        the request as they are; the worker shapes them for the contract."""
        self._next_id += 1
        rid = self._next_id
        reply = BatchReply()
        count = 1 if whole else len(samples)
        limits = wire.Limits(output_bytes=output_bytes * (len(samples) if whole else 1), count=count)
        line_limit = limits.line_bytes()
        seen: set[int] = set()
        try:
            if raw:
                self._write_bytes(_raw_request(rid, samples, precise, whole))
            else:
                self._write({"op": "grade", "id": rid, "samples": samples, "precise": precise, "whole": whole})
        except (BrokenPipeError, OSError):
            reply.failure = Failure("crash", self._exit_message(memory_mb))
            self.kill()
            return reply
        began = time.monotonic()
        ceiling = began + timeout * count  # the whole batch: never more than timeout per sample
        deadline = min(began + timeout, ceiling)
        while True:
            try:
                line = self._read_line(deadline, cancel, line_limit)
            except Cancelled:
                reply.failure = Failure("cancelled", "cancelled")
                break
            except EOFError:
                reply.failure = Failure("crash", self._exit_message(memory_mb))
                break
            except OverflowError:
                reply.failure = Failure(
                    "output", f"output size limit ({output_bytes // 1024} KiB) exceeded: the worker sent a message "
                    f"over {line_limit} bytes (printed text is kept up to {wire.PRINTED_CHARS} characters)")
                break
            if line is None:
                reply.failure = Failure("timeout", f"wall-time limit ({timeout:g} s) exceeded")
                break
            try:
                message = wire.check_message(wire.loads(line), rid)
                if "r" in message:
                    entries = message["r"]
                    if not isinstance(entries, list):
                        raise wire.ProtocolError("the worker sent a malformed result list")
                    checked = wire.check_entries(entries, limits, seen)
                    scores: dict[int, JsonArray | float] = {}
                    if "f" in message:  # plain float scores, one array (wire.check_floats)
                        wire.check_floats(message["f"], message.get("at"), limits, seen, scores)
                    # kept only once the whole message passed: a line refused in its float array
                    # leaves nothing of its entries behind, and the other way round
                    for entry in checked:
                        reply.results[entry[0]] = entry
                    reply.results.update(scores)
                    if checked or scores:  # progress: the next sample's time starts now
                        deadline = min(time.monotonic() + timeout, ceiling)
                elif message.get("done") is True:
                    reply.cpu_seconds = wire.number(message.get("cpu"))
                    reply.strays = int(wire.number(message.get("strays")))
                    self.cpu_seconds = reply.cpu_seconds
                    return reply
                elif message.get("op") == "model":
                    asked = time.monotonic()
                    answer = self._answer_model(message, on_model, len(reply.results))
                    try:
                        self._write(answer)
                    except (BrokenPipeError, OSError):
                        continue  # the EOF is read next round
                    spent = time.monotonic() - asked  # the studio's time, not the grader's
                    deadline, ceiling = deadline + spent, ceiling + spent
                else:
                    raise wire.ProtocolError("unexpected message from the worker")
            except wire.ProtocolError as exc:
                reply.failure = Failure("protocol", str(exc))
                break
        self.kill()
        return reply

    @staticmethod
    def _answer_model(message: JsonObject, on_model: ModelHandler | None, index: int) -> JsonObject:
        if on_model is None:
            return {"ok": False, "error": "model access not configured"}
        payload, kind = message.get("payload"), message.get("kind")
        if not isinstance(payload, dict) or not isinstance(kind, str) or not wire.check_depth(payload, 16):
            return {"ok": False, "error": "model call arguments must be keyword arguments"}
        return on_model(kind[:64], payload, index)


def _checked_load_reply(reply: JsonObject) -> JsonObject:
    """The worker's answer to ``load`` reduced to the fields the studio uses, each of its type."""
    if reply.get("ok") is True:
        params = reply.get("params")
        return {"op": "loaded", "ok": True, "entry": str(reply.get("entry"))[:200],
                "params": params if type(params) is int else None, "is_async": reply.get("is_async") is True}
    stage = reply.get("stage")
    line = reply.get("line")
    return {"op": "loaded", "ok": False,
            "stage": stage if stage in ("syntax", "execution", "structure") else "execution",
            "error": str(reply.get("error"))[: wire.ERROR_CHARS], "line": line if type(line) is int else None}

