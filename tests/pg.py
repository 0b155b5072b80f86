"""A real PostgreSQL server for the tests, started from the system's binaries (docs/team.md).

One server per test session: ``initdb`` into a fresh directory, ``pg_ctl start`` on a free port
of 127.0.0.1 with its unix socket beside the data, run as an unprivileged user when the tests run
as root (PostgreSQL refuses root). A library migrated once is the template each test's database
is copied from. In CI (``CI=true``, or ``STUDIO_REQUIRE_POSTGRES=1``) a missing server fails the
tests instead of skipping them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

TEMPLATE = "studio_template"


def required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("STUDIO_REQUIRE_POSTGRES") == "1"


def find_bin_dir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: PATH first, then Debian's versioned directories."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.bin_dir = find_bin_dir()
        if self.bin_dir is None:
            raise RuntimeError("PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql)")
        self.root = Path(tempfile.mkdtemp(prefix="studio-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.run_as: str | None = None
        if os.geteuid() == 0:  # the server refuses to run as root
            self.run_as = "nobody"
            entry = pwd.getpwnam("nobody")
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o755)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "start", "-o",
                  f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self.admin_url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, program: str, *args: str) -> None:
        assert self.bin_dir is not None
        command = [str(self.bin_dir / program), *args]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120, cwd=self.root)

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def make_template(self) -> None:
        from studio.core.store import Library

        self.admin(f"CREATE DATABASE {TEMPLATE}")
        Library.open(self.url(TEMPLATE)).close()

    def new_database(self, *, migrated: bool = True) -> str:
        name = "t_" + uuid.uuid4().hex[:12]
        self.admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {TEMPLATE}" if migrated else ""))
        return name

    def drop(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_or_skip() -> PgServer:
    try:
        server = PgServer()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        message = f"no PostgreSQL server for the tests: {exc}"
        if required():
            pytest.fail(message)
        pytest.skip(message)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        server.stop()
        message = "psycopg is not installed (pip install -e '.[test]')"
        if required():
            pytest.fail(message)
        pytest.skip(message)
    server.make_template()
    return server
