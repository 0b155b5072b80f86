"""Shared fixtures: a fresh library file per test, and the CLI run in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pg import PgServer, start_or_skip  # noqa: E402

from studio.core.demo.fake_server import FakeJudgeServer, FakeRewardServer  # noqa: E402
from studio.core.store import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def endpoint_approvals(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own endpoint approvals file (store/endpoint_trust.py), never the user's."""
    folder = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("GRADER_STUDIO_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "library.sqlite"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A real PostgreSQL server for the whole session (tests/pg.py)."""
    server = start_or_skip()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh, migrated library database on the session's server, dropped afterwards."""
    name = pg_server.new_database()
    yield pg_server.url(name)
    pg_server.drop(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A library location on each backend: a SQLite file, then a PostgreSQL database. A test module
    runs on both by naming its ``db_path`` after it (``db_path = any_db`` fixture, tests/pg.py)."""
    if request.param == "sqlite":
        return tmp_path / "library.sqlite"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def library(db_path: Path) -> Iterator[Library]:
    lib = Library.open(db_path)
    yield lib
    lib.close()


def run_cli(*args: str, db: Path | None = None, input: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a child process: exit codes and streams as a user sees them."""
    full_env = {**os.environ, **(env or {})}
    if db is not None:
        full_env["GRADER_STUDIO_DB"] = str(db)
    return subprocess.run([sys.executable, "-m", "studio", *args], capture_output=True, text=True,
                          input=input, env=full_env, timeout=timeout, cwd=REPO)


@pytest.fixture
def cli(db_path: Path):  # type: ignore[no-untyped-def]
    def invoke(*args: str, **kwargs):  # type: ignore[no-untyped-def]
        return run_cli(*args, db=db_path, **kwargs)

    return invoke


class MemoryKeyring(KeyringBackend):
    """An in-process keyring backend (the test machine has no OS keyring)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# Our scripted judge and reward servers on 127.0.0.1 (judge, CLI and window tests share them).
@pytest.fixture
def fake_judge() -> Iterator[FakeJudgeServer]:
    server = FakeJudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def reward_server() -> Iterator[FakeRewardServer]:
    server = FakeRewardServer().start()
    yield server
    server.stop()
