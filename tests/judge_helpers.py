"""Helpers shared by the judge tests (importable because pytest puts this folder on sys.path)."""

from __future__ import annotations

import contextlib
import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from studio.core.demo.fake_server import FakeJudgeServer
from studio.core.models import Sample, Turn
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library
from studio.core.store.endpoints import EndpointRepository


def library_bytes(db_path: Path) -> bytes:
    """Every byte of a library file and the files beside it (``-wal``, ``-shm``), read by a child
    process: this one may have the library open, and reading it here would drop its locks
    (studio/core/store/file_guard.py refuses it)."""
    read = ("import pathlib, sys; p = pathlib.Path(sys.argv[1]); "
            "sys.stdout.buffer.write(b''.join(f.read_bytes() for f in sorted(p.parent.glob(p.name + '*'))))")
    return subprocess.run([sys.executable, "-c", read, str(db_path)], capture_output=True, check=True).stdout


def add_endpoint(
    library: Library, server: FakeJudgeServer, name: str = "fake", **fields: Any
) -> EndpointConfig:
    values: dict[str, Any] = {
        "name": name,
        "base_url": server.base_url,
        "model": "fake-judge",
        "retry_backoff": 0.01,
        "timeout": 2.0,
        "max_concurrency": 8,
    }
    values.update(fields)
    config = EndpointConfig(**values)
    repo = EndpointRepository.of(library)
    repo.save(config)
    # the user added it themselves (as `endpoints add` does): where it sends their key is approved
    repo.approve(repo.get(name))
    return config


def qa(
    sample_id: str, question: str, completion: str, expected: str | None = None, **extra: Any
) -> Sample:
    return Sample(
        id=sample_id,
        messages=[Turn(role="user", content=question)],
        completion=completion,
        expected=expected,
        **extra,
    )


@contextlib.contextmanager
def served(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """A hand-written endpoint (``handler``) on 127.0.0.1, a free port, in a thread: its /v1 base URL,
    the server shut and closed afterwards."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def send_json(handler: http.server.BaseHTTPRequestHandler, reply: bytes, status: int = 200) -> None:
    """A hand-written endpoint's answer: ``reply`` as a JSON body."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(reply)))
    handler.end_headers()
    handler.wfile.write(reply)


def without_proxy_variables(monkeypatch: Any) -> None:
    """No proxy variable leaks into a test from the machine (each test sets the ones it means)."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def cancelled_after(library: Library, run_id: int, done: int) -> Any:
    """Grade run ``run_id`` until ``done`` samples are stored, then cancel it (as the window's
    Cancel does); the run as it was left."""
    from studio.core.engine.progress import Progress
    from studio.core.engine.runner import execute_run

    cancel = threading.Event()

    def on_progress(progress: Progress) -> None:
        if progress.done >= done:
            cancel.set()

    return execute_run(library, run_id, on_progress=on_progress, cancel=cancel)
