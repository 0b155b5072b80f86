"""A path a user or a teammate names that is a FIFO, a device or a folder: refused with a sentence
wherever it is read, never waited on forever (a FIFO with no writer blocks a plain open; /dev/zero
never ends). A test that hangs here fails at pytest-timeout's bound."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core import safe_files
from studio.core.datasets.readers import DatasetError, read_dataset
from studio.core.judges.http.tls import TrustStoreError, ssl_context
from studio.core.models import files
from tests.conftest import run_cli


@pytest.fixture(params=["fifo", "chardev", "folder", "socket"])
def odd_path(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A path that is not a regular file, named like the file a reader expects, and what it is."""
    if request.param == "fifo":
        path = tmp_path / "data.jsonl"
        os.mkfifo(path)
        yield path, "a named pipe (FIFO)"
    elif request.param == "chardev":
        path = tmp_path / "data.jsonl"
        path.symlink_to("/dev/zero")  # a link to it: the name looks like a file
        yield path, "a character device"
    elif request.param == "folder":
        path = tmp_path / "data.jsonl"
        path.mkdir()
        yield path, "a folder"
    else:
        path = tmp_path / "data.jsonl"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        yield path, "a socket"
        server.close()


def test_open_regular_refuses_each_kind_with_a_sentence(odd_path: tuple[Path, str]) -> None:
    path, what = odd_path
    with pytest.raises(safe_files.NotAFile) as caught:
        safe_files.read_regular(path)
    assert str(caught.value) == f"{path} is {what}, not a regular file: name a file to read"
    assert safe_files.file_problem(path) == f"it is {what}, not a regular file"


def test_a_regular_file_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "ok.txt"
    path.write_text("héllo\n", encoding="utf-8")
    assert safe_files.read_regular_text(path) == "héllo\n"
    assert safe_files.read_regular(path) == "héllo\n".encode()
    assert safe_files.file_problem(path) is None
    assert safe_files.file_problem(tmp_path / "missing") == "no such file"


def test_a_dataset_that_is_not_a_file_is_refused(odd_path: tuple[Path, str]) -> None:
    path, what = odd_path
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert f"it is {what}, not a regular file" in str(caught.value)


def test_a_grader_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.grader.yaml"
    os.mkfifo(path)
    with pytest.raises(files.DefinitionError) as caught:
        files.load(path)
    assert "a named pipe (FIFO), not a regular file" in str(caught.value)


def test_a_ca_bundle_that_is_a_fifo_is_refused_when_the_call_is_made(tmp_path: Path) -> None:
    """The stored endpoint's bundle is read again at run time (ssl_context): a FIFO put there after
    `endpoints add` is a sentence for the samples, not a run that hangs in OpenSSL's open."""
    bundle = tmp_path / "ca.pem"
    os.mkfifo(bundle)
    with pytest.raises(TrustStoreError) as caught:
        ssl_context(str(bundle))
    assert f"{bundle} is a named pipe (FIFO), not a regular file" in str(caught.value)


def test_ssl_cert_file_that_is_a_device_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/dev/zero")
    with pytest.raises(TrustStoreError) as caught:
        ssl_context(None)
    assert "/dev/zero is a character device, not a regular file" in str(caught.value)


def test_a_real_ca_bundle_still_loads(tmp_path: Path) -> None:
    import certifi

    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    assert ssl_context(str(bundle)).cert_store_stats()["x509_ca"] > 0


@pytest.mark.parametrize("argv", [
    ("datasets", "import", "{fifo}.jsonl"),
    ("import", "{fifo}.py"),
    ("validate", "{fifo}.grader.yaml"),
    ("graders", "create", "{fifo}.py"),
    ("graders", "save", "{fifo}.grader.yaml"),
    ("suites", "import", "{fifo}.suite.yaml"),
    ("labels", "import", "--dataset", "d", "{fifo}.jsonl"),
    ("endpoints", "add", "e", "--base-url", "https://127.0.0.1:9/v1", "--model", "m", "--ca-bundle", "{fifo}.pem"),
])
def test_every_command_that_reads_a_named_file_refuses_a_fifo(argv: tuple[str, ...], tmp_path: Path) -> None:
    fifo = tmp_path / "named"
    path = Path(argv[-1].format(fifo=fifo))
    os.mkfifo(path)
    args = [a.format(fifo=fifo) for a in argv]
    if argv[0] == "labels":  # the dataset the labels are for
        data = tmp_path / "d.jsonl"
        data.write_text('{"id": "s1", "input": "q"}\n', encoding="utf-8")
        assert run_cli("datasets", "import", str(data), db=tmp_path / "library.sqlite").returncode == 0
    result = run_cli(*args, db=tmp_path / "library.sqlite", timeout=90)
    assert result.returncode in (1, 2), result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
    assert str(path) in result.stderr or repr(str(path)) in result.stderr, result.stderr


def test_the_generate_system_prompt_file_refuses_a_device(tmp_path: Path) -> None:
    result = run_cli("generate", "d", "--endpoint", "e", "--name", "out", "--system", "@/dev/zero",
                     db=tmp_path / "library.sqlite", timeout=90)
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr, result.stderr

