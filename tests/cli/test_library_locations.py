"""Library locations on the command line (docs/team.md, docs/security.md): a URL the studio does
not read is one sentence naming the accepted forms, exit 2, and nothing created; a server URL's
password, in any form, is masked on every surface (``library info``, ``library copy``, ``demo``,
the server's refusals) and never reaches a grading child's command line or environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg import PgServer, free_port

from studio.core.models import FunctionGrader, Sample
from studio.core.store import Library
from tests.conftest import REPO, run_main

PASSWORD = "s3cr@t:pw/x"  # an '@', a ':' and a '/' inside: percent-encoded in a URL
ENCODED = "s3cr%40t%3Apw%2Fx"
LEAKS = (PASSWORD, ENCODED, "s3cr", "pw/x")


def studio(cwd: Path, *args: str, db: str | None = None, env: dict[str, str] | None = None,
           child: bool = False) -> subprocess.CompletedProcess[str]:
    """The command in ``cwd`` with no library named by the environment: in-process (``run_main``), or
    in a real child where the process is the subject (the window's start, a grading child's view)."""
    argv = [*(["--db", db] if db is not None else []), *args]
    if not child:
        return run_main(*argv, env={"GRADER_STUDIO_DB": None, **(env or {})}, cwd=cwd)
    full = {k: v for k, v in os.environ.items() if k != "GRADER_STUDIO_DB"}
    full.update({"PYTHONPATH": str(REPO), **(env or {})})
    return subprocess.run([sys.executable, "-m", "studio", *argv], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def hidden(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (leak, text)


UNREAD = ["postgresql+psycopg2://u:s3cr%40t%3Apw%2Fx@127.0.0.1/db", "postgres:/u:s3cr@t:pw/x@127.0.0.1/db",
          "sqlite+x://lib.sqlite", "mysql://u:s3cr@t:pw/x@127.0.0.1/db", "file:lib.sqlite", "file:///tmp/lib.sqlite",
          "C:\\x\\lib.sqlite", "my:lib.sqlite", "postgresql://u:s3cr@t:pw/x@127.0.0.1/db",
          "postgresql://u@127.0.0.1:notaport/db", "postgresql://u@[::1/db", "postgresql://u@h/db#frag"]


@pytest.mark.skipif(os.name == "nt", reason="C:\\x is a drive there")
@pytest.mark.parametrize("value", UNREAD)
def test_a_url_the_studio_does_not_read_is_one_sentence_exit_2_and_nothing_created(tmp_path: Path,
                                                                                    value: str) -> None:
    sentences = [
        refused(studio(tmp_path, "graders", "list", db=value)),
        refused(studio(tmp_path, "library", "info", env={"GRADER_STUDIO_DB": value})),
        refused(studio(tmp_path, "library", "copy", value, "out.sqlite")),
        refused(studio(tmp_path, db=value, child=True)),  # the window: refused before it opens
    ]
    for line in sentences:
        hidden(line)
    if "://" in value and value.split(":", 1)[0] in ("postgresql", "postgres"):
        assert sentences[0].startswith("error: cannot read the library URL postgresql://…: ")
    else:
        assert "is not a library location the studio reads: it reads a library file's path, or " \
               "postgresql://USER@HOST:PORT/DATABASE" in sentences[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["postgresql://", "postgresql://%zz@127.0.0.1:{port}/d",
                                   "postgresql://u@127.0.0.1:{port}/d?connect_timeout=abc",
                                   "postgresql://u@127.0.0.1:{port}/d?bogus=1",
                                   "postgresql://u:s3cr%40t%3Apw%2Fx@127.0.0.1:{port}/d?sslmode=nonsense"])
def test_odd_server_urls_are_a_sentence_never_a_bug(tmp_path: Path, value: str) -> None:
    line = refused(studio(tmp_path, "graders", "list", db=value.format(port=free_port()),
                          env={"PGHOST": "127.0.0.1", "PGPORT": str(free_port()), "PGCONNECT_TIMEOUT": "5"}))
    hidden(line)
    assert list(tmp_path.iterdir()) == []


def test_a_url_in_the_wrong_place_is_quoted_back_masked(tmp_path: Path) -> None:
    url = f"postgresql://alice:{ENCODED}@127.0.0.1/team?password={ENCODED}"
    for args in (("graders", "list", url), (url,), ("library", "info", f"--db={url}")):
        done = studio(tmp_path, *args)
        assert done.returncode == 2 and "usage:" in done.stderr and "Traceback" not in done.stderr, done.stderr
        hidden(done.stdout + done.stderr)
    assert "postgresql://alice@127.0.0.1/team?password=***" in studio(tmp_path, "graders", "list", url).stderr


def test_a_library_folder_that_cannot_be_made_is_a_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = refused(studio(tmp_path, "library", "info", db=str(blocker / "sub" / "lib.sqlite")))
    assert line.startswith(f"error: cannot create the library's folder {blocker / 'sub'}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.fixture
def secret_urls(pg_server: PgServer, pg_url: str) -> dict[str, str]:
    """The test database, named with a password in each form a user may type it (this test server
    trusts 127.0.0.1: the password is sent, never checked)."""
    tail = pg_url.removeprefix("postgresql://postgres@")
    return {
        "userinfo": f"postgresql://postgres:{ENCODED}@{tail}",
        "query": f"postgresql://postgres@{tail}?sslmode=disable&password={ENCODED}",
        "any case": f"postgres://postgres@{tail}?PassWord={ENCODED}",
        "both": f"postgresql://postgres:{ENCODED}@{tail}?sslpassword={ENCODED}",
    }


def test_library_info_demo_and_copy_show_the_url_masked(tmp_path: Path, pg_url: str,
                                                        secret_urls: dict[str, str]) -> None:
    tail = pg_url.removeprefix("postgresql://postgres@")
    shown = {
        "userinfo": f"postgresql://postgres@{tail}",
        "query": f"postgresql://postgres@{tail}?sslmode=disable&password=***",
        "any case": f"postgres://postgres@{tail}?PassWord=***",
        "both": f"postgresql://postgres@{tail}?sslpassword=***",
    }
    # libpq's option names are case-sensitive: the server's sentence, the URL still masked
    odd = refused(studio(tmp_path, "library", "info", db=secret_urls.pop("any case")))
    assert odd == f'error: cannot reach the library at {shown["any case"]}: invalid connection option "PassWord"'
    for form, url in secret_urls.items():
        info = studio(tmp_path, "library", "info", db=url)
        assert info.returncode == 0, info.stderr
        assert info.stdout.startswith(f"PostgreSQL library at {shown[form]}; writing as "), info.stdout
        hidden(info.stdout + info.stderr)
    demo = studio(tmp_path, "demo", db=secret_urls["userinfo"])
    assert demo.returncode == 0, demo.stderr
    assert f"demo library at {shown['userinfo']}" in demo.stdout
    hidden(demo.stdout + demo.stderr)
    back = tmp_path / "back.sqlite"
    copied = studio(tmp_path, "library", "copy", secret_urls["query"], str(back))
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.rstrip().endswith(f"from {shown['query']} to {back}")
    hidden(copied.stdout + copied.stderr)
    again = studio(tmp_path, "library", "copy", str(back), secret_urls["both"])
    assert again.returncode == 1 and f"the library at {shown['both']} is not empty" in again.stderr
    hidden(again.stdout + again.stderr)


def test_the_servers_refusals_show_the_url_masked(tmp_path: Path, pg_server: PgServer) -> None:
    missing = f"postgresql://postgres:{ENCODED}@127.0.0.1:{pg_server.port}/no_such_db?password={ENCODED}"
    line = refused(studio(tmp_path, "graders", "list", db=missing))
    assert 'database "no_such_db" does not exist' in line
    assert f"postgresql://postgres@127.0.0.1:{pg_server.port}/no_such_db?password=***" in line
    hidden(line)
    down = f"postgresql://alice:{ENCODED}@127.0.0.1:{free_port()}/team"
    hidden(refused(studio(tmp_path, "library", "info", db=down)))
    assert list(tmp_path.iterdir()) == []


PROBE = '''async def grade(thread):
    import os, sys
    seen = " ".join(sys.argv) + " ".join(f"{k}={v}" for k, v in os.environ.items())
    try:
        with open("/proc/self/cmdline", "rb") as f:
            seen += f.read().decode("utf-8", "replace")
    except OSError:
        pass
    return 0.0 if ("s3cr" in seen or "GRADER_STUDIO_DB" in seen or "PGPASSWORD" in seen) else 1.0
'''


def test_a_grading_child_never_sees_the_password(tmp_path: Path, secret_urls: dict[str, str], pg_url: str) -> None:
    with Library.open(pg_url) as lib:
        lib.graders.create(FunctionGrader(key="probe", source=PROBE))
        lib.datasets.create("d", [Sample(id=f"s{i}", completion="x") for i in range(3)])
    done = studio(tmp_path, "run", "probe", "d", "--json", "--allow-unsandboxed",
                  env={"GRADER_STUDIO_DB": secret_urls["both"], "PGPASSWORD": PASSWORD})
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed" and summary["done"] == 3
    with Library.open(pg_url) as lib:
        scores = [r["score"] for r in lib.runs.results(summary["id"])]
    assert scores == [1.0, 1.0, 1.0]
    hidden(done.stdout + done.stderr)


def test_the_live_view_connects_with_a_password_that_needs_quoting(pg_url: str) -> None:
    """The window's watcher opens its own connection: with the engine's arguments, so a password
    with a blank, a '%' or an '@' reaches libpq as typed (a URL rebuilt from them did not parse)."""
    from studio.core.models import BuiltinGrader
    from studio.core.store.watch import LibraryWatcher

    tail = pg_url.removeprefix("postgresql://postgres@")
    url = f"postgresql://postgres:{ENCODED}%20and%25%2B@{tail}"  # "s3cr@t:pw/x and%+"
    with Library.open(url) as lib:
        watcher = LibraryWatcher(lib)
        try:
            with Library.open(pg_url) as other:
                other.graders.create(BuiltinGrader(key="exact", function="exact_match"))
            assert "graders" in watcher.changes()
        finally:
            watcher.close()
