"""Shared fixtures: a fresh library file per test, and the CLI run in-process or as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# Python's own warning filters (what a child process starts with); pytest's are stricter
_PYTHON_WARNING_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                           ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                           ("ignore", ResourceWarning, None)]


def _process_state(fresh: dict[str, object] | None = None) -> dict[str, object]:
    """What a process holds that a command reads and changes: the sandbox opt-in (a test's
    ``allow_unsandboxed``, a command's ``--allow-unsandboxed``) and the secrets it scrubs from what it
    prints. Returns the current state, after setting ``fresh`` (a child's: no opt-in, no secret known,
    so a command neither runs code nor hides a leak on the strength of what the test did)."""
    settings = sys.modules.get("studio.core.sandbox.settings")
    credentials = sys.modules.get("studio.core.judges.http.credentials")
    state = {"allowed": getattr(settings, "_allowed_by_user", False),
             "secrets": set(getattr(credentials, "_KNOWN_SECRETS", ()))}
    if fresh is not None:
        if settings is not None:
            settings.allow_unsandboxed(bool(fresh["allowed"]))
        if credentials is not None:
            credentials._KNOWN_SECRETS.clear()
            credentials._KNOWN_SECRETS.update(fresh["secrets"])  # type: ignore[arg-type]
    return state


_A_CHILDS_STATE: dict[str, object] = {"allowed": False, "secrets": set()}


def run_main(*args: str, db: Path | str | None = None, input: str | None = None,
             env: dict[str, str | None] | None = None, timeout: float = 120,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``studio.cli.main`` in this process, seen as ``run_cli`` sees the child: exit code, stdout and
    stderr as text (line ends read as a pipe's reader reads them), stdin from ``input``, the
    environment and working directory of the child, sys.argv, Python's default warning filters, a
    child's sandbox opt-in and known secrets (none: ``_process_state``), and what the process's end
    would release (the shared sandbox pool) released; a thread the command
    leaves running (a child would hang at exit) fails the test. Several times faster
    than a child, which spends most of a short command importing the studio again. Use ``run_cli``
    where the process itself is the subject: start-up imports, signals, exit without cleanup, or an
    environment read once per process (PATH for the sandbox's mode). ``cwd``: the child's working
    directory (the checkout's by default, as ``run_cli``'s); an ``env`` value of None: a variable the
    child is started without."""
    import io
    import warnings

    from studio.cli import main
    from studio.core.sandbox.pool import close_shared_pool

    changes = {**(env or {}), **({"GRADER_STUDIO_DB": str(db)} if db is not None else {})}
    saved_env = {key: os.environ.get(key) for key in changes}
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv, os.getcwd()
    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") for _ in range(2)]
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
    threads_before = set(threading.enumerate())
    process_state = _process_state(_A_CHILDS_STATE)
    for key, value in changes.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    sys.stdin, sys.stdout, sys.stderr = stdin, streams[0], streams[1]
    sys.argv = ["grader-studio", *args]
    os.chdir(cwd or REPO)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_PYTHON_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")  # type: ignore[arg-type]
            try:
                code: object = main(list(args))
            except SystemExit as exc:
                code = exc.code
    finally:
        close_shared_pool()
        _process_state(process_state)
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved[:4]
        os.chdir(saved[4])
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    # a child would not exit while a thread of the command that is not a daemon still runs
    left = [t for t in threading.enumerate() if t not in threads_before and not t.daemon]
    for thread in left:
        thread.join(timeout)
    assert not any(t.is_alive() for t in left), f"the command left threads running, a process would hang: {left}"
    texts = []
    for stream in streams:
        stream.flush()
        raw = stream.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]
        texts.append(raw.replace("\r\n", "\n").replace("\r", "\n"))
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(["grader-studio", *args], returncode, texts[0], texts[1])


@pytest.fixture
def cli(db_path: Path):  # type: ignore[no-untyped-def]
    """The CLI on the test's library, in-process (``run_main``); in a real child (``run_cli``) when
    the test changes PATH, which a process reads once (the sandbox's mode is detected once)."""
    def invoke(*args: str, **kwargs):  # type: ignore[no-untyped-def]
        run = run_cli if "PATH" in (kwargs.get("env") or {}) else run_main
        return run(*args, db=db_path, **kwargs)

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


# The conformance count (tests/conformance/conftest.py) summed over pytest-xdist's workers.
_WORKER_CONFORMANCE: dict[str, list[int]] = {}


def write_conformance(terminalreporter: Any, tally: dict[str, list[int]]) -> None:
    if tally:
        terminalreporter.write_sep("-", "conformance: comparisons with the platforms' own code")
        for platform, (made, agreed) in sorted(tally.items()):
            terminalreporter.write_line(f"{platform}: {agreed}/{made} agree ({100.0 * agreed / made:.2f}%)")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller, as each worker ends: its conformance count added to the run's."""
    for platform, (made, agreed) in getattr(node, "workeroutput", {}).get("conformance", {}).items():
        total = _WORKER_CONFORMANCE.setdefault(platform, [0, 0])
        total[0] += made
        total[1] += agreed


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write_conformance(terminalreporter, _WORKER_CONFORMANCE)


# Seconds each test file took in a measured run (``bench/suite_wall.py --write-file-seconds``): the
# order the files are handed to xdist's workers. Only an order: a stale or missing entry costs time,
# never correctness (a file not listed is estimated from its test count).
FILE_SECONDS = REPO / "tests" / "file_seconds.json"
_SECONDS_A_TEST = 0.25  # a file not yet measured: about the suite's mean a test


def pytest_configure(config: pytest.Config) -> None:
    """xdist keeps the order of the files below instead of its own (most tests first): a file of
    one long test (mypy over studio/) sorted by its count would start last and hold the run's end."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def file_seconds() -> dict[str, float]:
    try:
        table = json.loads(FILE_SECONDS.read_text())
    except (OSError, ValueError):
        return {}
    return {str(name): float(seconds) for name, seconds in table.items()} if isinstance(table, dict) else {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, as measured (``FILE_SECONDS``), tests marked ``early`` before them:
    xdist (``--dist loadfile``) hands a worker the next file when it is nearly done, so the long ones
    overlap the rest and short ones fill the end, instead of one worker finishing minutes after the
    other. A file's tests keep their order (a stable sort on the file's cost)."""
    known = file_seconds()
    counts = Counter(_file_of(item) for item in items)
    early = {_file_of(item) for item in items if item.get_closest_marker("early") is not None}

    def cost(item: pytest.Item) -> tuple[bool, float]:
        name = _file_of(item)
        return name not in early, -known.get(name, counts[name] * _SECONDS_A_TEST)

    items.sort(key=cost)


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
