"""A pool started with a secret in the studio's environment, shared by the hostile tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from studio.core.sandbox.pool import WorkerPool
from studio.core.sandbox.settings import allow_unsandboxed

SECRET = "sk-test-secret"


@pytest.fixture(scope="package", autouse=True)
def opt_in_to_the_fallback() -> Iterator[None]:
    """The hostile suite runs in whichever mode this machine offers (CI runs it a second time with
    bwrap hidden from PATH): without bubblewrap the user's opt-in is what lets grader code run, and
    the corpus must still be contained. Reset afterwards: other tests see the default refusal."""
    allow_unsandboxed(True)
    yield
    allow_unsandboxed(False)


@pytest.fixture(scope="session")
def hostile_pool() -> Iterator[WorkerPool]:
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET  # the studio holds a key; no grader may see it
    pool = WorkerPool(size=2)
    pool.warm()
    yield pool
    pool.close()
    if before is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = before
