"""Pools started with a secret in the studio's environment, shared by the hostile tests: one in
this machine's mode (``hostile_pool``) and one in each isolation mode (``mode_pool``)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from namespaces_fallback import require_namespaces

from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.settings import SandboxSettings, allow_unsandboxed

SECRET = "sk-test-secret"


@pytest.fixture(scope="package", autouse=True)
def opt_in_to_the_fallback() -> Iterator[None]:
    """The hostile suite runs in whichever mode this machine offers (CI runs it a second time with
    bwrap hidden from PATH): without bubblewrap the user's opt-in is what lets grader code run, and
    the corpus must still be contained. Reset afterwards: other tests see the default refusal."""
    allow_unsandboxed(True)
    yield
    allow_unsandboxed(False)


@contextmanager
def studio_holding_a_key() -> Iterator[None]:
    """The studio's environment holds an API key (SECRET) while a pool starts and serves: no
    grader may see it. The variable as it was afterwards."""
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = before


@pytest.fixture(scope="session")
def hostile_pool() -> Iterator[WorkerPool]:
    with studio_holding_a_key():
        pool = WorkerPool(size=2)
        pool.warm()
        yield pool
        pool.close()


#: each isolation mode a test is run in (CI's second pass hides bubblewrap: namespaces only)
MODES = ["namespaces"] if os.environ.get("GRADER_STUDIO_EXPECT_MODE") == "namespaces" else ["bubblewrap", "namespaces"]


@pytest.fixture(params=MODES)
def mode_pool(request: pytest.FixtureRequest) -> Iterator[WorkerPool]:
    """A one-worker pool in each isolation mode, the studio holding a key; a mode this Linux
    machine lacks fails (namespaces: skipped with the reason where the kernel refuses it, required
    in CI)."""
    if not sys.platform.startswith("linux"):
        pytest.fail("the isolation modes are Linux's")
    needed = "bwrap" if request.param == "bubblewrap" else "unshare"
    if shutil.which(needed) is None:
        pytest.fail(f"{needed} is missing: the '{request.param}' mode cannot be checked")
    if request.param == "namespaces":
        require_namespaces()
    with studio_holding_a_key():
        pool = WorkerPool(size=1, settings=SandboxSettings(mode=request.param, allow_unsandboxed=True))
        yield pool
        pool.close()
