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
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .launch import LaunchPlan

MAX_LINE_BYTES = 64 * 1024 * 1024

ModelHandler = Callable[[str, dict[str, Any], int], dict[str, Any]]


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
    results: dict[int, list[Any]] = field(default_factory=dict)
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
        )
        self._buf = bytearray()
        self.ready: dict[str, Any] | None = None
        self.loaded: dict[str, Any] | None = None
        self.cpu_seconds = 0.0
        self.started = time.monotonic()
        self._next_id = 0

    # -- low level ------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _write(self, message: dict[str, Any]) -> None:
        self._write_bytes((json.dumps(message, separators=(",", ":"), allow_nan=True) + "\n").encode())

    def _write_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _read_line(self, deadline: float, cancel: threading.Event | None = None) -> bytes | None:
        """One line, or None at the deadline; raises EOFError when the worker's output ends and
        Cancelled when ``cancel`` is set while waiting."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            if len(self._buf) > MAX_LINE_BYTES:
                raise OverflowError("output line too long")
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
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError
            self._buf += chunk

    def stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-2000:].decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def wait_ready(self, timeout: float) -> dict[str, Any]:
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
        message = json.loads(line)
        if message.get("op") != "ready":
            self.kill()
            raise WorkerDied(f"sandbox worker sent {message!r} instead of ready")
        self.ready = message
        return message

    def kill(self) -> None:
        if self.proc.poll() is None:
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
    def load(self, request: dict[str, Any], timeout: float, start_timeout: float) -> dict[str, Any]:
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
        reply = json.loads(line)
        if reply.get("op") != "loaded":
            self.kill()
            return {"ok": False, "stage": "execution", "error": "protocol error", "line": None}
        if reply.get("ok"):
            self.loaded = reply
        return reply

    def grade(
        self,
        samples: list[Any] | list[str],
        *,
        timeout: float,
        precise: bool = False,
        whole: bool = False,
        on_model: ModelHandler | None = None,
        memory_mb: int | None = None,
        cancel: threading.Event | None = None,
        raw: bool = False,
    ) -> BatchReply:
        """Run one batch. ``timeout`` is the per-sample wall limit: the time allowed between two
        signs of progress (a flushed result or a model call). ``raw``: the samples are stored sample
        JSON texts, spliced into the request as they are; the worker shapes them for the contract."""
        self._next_id += 1
        rid = self._next_id
        reply = BatchReply()
        count = 1 if whole else len(samples)
        try:
            if raw:
                self._write_bytes(_raw_request(rid, samples, precise, whole))  # type: ignore[arg-type]
            else:
                self._write({"op": "grade", "id": rid, "samples": samples, "precise": precise, "whole": whole})
        except (BrokenPipeError, OSError):
            reply.failure = Failure("crash", self._exit_message(memory_mb))
            self.kill()
            return reply
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._read_line(deadline, cancel)
            except Cancelled:
                reply.failure = Failure("cancelled", "cancelled")
                break
            except EOFError:
                reply.failure = Failure("crash", self._exit_message(memory_mb))
                break
            except OverflowError:
                reply.failure = Failure("output", "output size limit exceeded (a result line over 64 MiB)")
                break
            if line is None:
                reply.failure = Failure("timeout", f"wall-time limit ({timeout:g} s) exceeded")
                break
            try:
                message = json.loads(line)
            except ValueError:
                reply.failure = Failure("protocol", "the grader wrote garbage into the sandbox channel")
                break
            if not isinstance(message, dict) or message.get("id") != rid:
                reply.failure = Failure("protocol", "the grader wrote into the sandbox channel")
                break
            if "r" in message:
                for entry in message["r"]:
                    if isinstance(entry, list) and entry and type(entry[0]) is int and 0 <= entry[0] < count:
                        reply.results[entry[0]] = entry
                deadline = time.monotonic() + timeout
            elif message.get("done"):
                reply.cpu_seconds = float(message.get("cpu") or 0.0)
                reply.strays = int(message.get("strays") or 0)
                self.cpu_seconds = reply.cpu_seconds
                return reply
            elif message.get("op") == "model":
                answer = self._answer_model(message, on_model, len(reply.results))
                try:
                    self._write(answer)
                except (BrokenPipeError, OSError):
                    continue  # the EOF is read next round
                deadline = time.monotonic() + timeout
            else:
                reply.failure = Failure("protocol", "unexpected message from the worker")
                break
        self.kill()
        return reply

    @staticmethod
    def _answer_model(message: dict[str, Any], on_model: ModelHandler | None, index: int) -> dict[str, Any]:
        if on_model is None:
            return {"ok": False, "error": "model access not configured"}
        payload = message.get("payload")
        if not isinstance(payload, dict):
            return {"ok": False, "error": "model call arguments must be keyword arguments"}
        return on_model(str(message.get("kind")), payload, index)

