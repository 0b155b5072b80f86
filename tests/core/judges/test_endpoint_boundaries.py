"""What an endpoint's settings may not do (issue 44, item 7): an Azure deployment name cannot change
the URL's path, a base URL cannot hold credentials, and a key a server echoes back is masked in
``endpoints test`` and in a generated dataset's provenance in every form the judge path masks.
Servers are real, on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest
from judge_helpers import qa
from net_servers import JudgeLog, ThreadServer, answer_json, naming_judge, read_request

from studio.cli import main
from studio.core.engine.generate import GenerationSettings, generate
from studio.core.engine.runner import RunOptions, run_grader
from studio.core.errors import StudioError
from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.store import Library

KEY = "sk-echoed-5f0e1d2c3b4a69788796"

#: the forms of the key the judge path masks (credentials.remember_secret, redaction.py)
FORMS = (KEY, KEY[::-1], " ".join(KEY), KEY[:14] + "\u200b" + KEY[14:], KEY.encode().hex(),
         base64.b64encode(KEY.encode()).decode().rstrip("="),
         base64.b64encode(f"user:{KEY}".encode()).decode()[8:-4])

BAD_DEPLOYMENTS = (".", "..", "a/b", "../admin", "x?api-version=1", "x#frag", "%2e%2e", "a b", "a\\b", "",
                   "d" * 65)


def assert_masked(text: str) -> None:
    for form in FORMS:
        assert form not in text, form


def echoing(status: int) -> object:
    """A server that answers every request with the key it was sent, in many disguises."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await read_request(reader)) is not None:
            _, headers, _ = request
            sent = headers.get("authorization", "").removeprefix("Bearer ")
            said = (f"your key {sent}, reversed {sent[::-1]}, spaced {' '.join(sent)}, hex {sent.encode().hex()}, "
                    f"basic {base64.b64encode(f'user:{sent}'.encode()).decode()}")
            body = (answer_json(said, "a1") if status == 200 else
                    json.dumps({"error": {"message": said}}).encode())
            reason = "OK" if status == 200 else "Unauthorized"
            writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()

    return handler


@pytest.mark.parametrize("name", BAD_DEPLOYMENTS)
def test_an_azure_deployment_name_cannot_change_the_url_path(name: str) -> None:
    with pytest.raises(ValueError, match="deployment"):
        EndpointConfig(name="az", kind="azure", base_url="https://r.openai.azure.com", model=name,
                       api_version="2024-10-21")
    good = EndpointConfig(name="az", kind="azure", base_url="https://r.openai.azure.com", model="gpt-4o.mini_2",
                          api_version="2024-10-21")
    if name:  # an empty override is no override: the endpoint's own deployment
        with pytest.raises(ValueError, match="deployment"):
            good.url_for("chat/completions", model=name)


def test_a_judges_model_cannot_move_an_azure_call_off_its_deployment(
    library: Library, db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    log = JudgeLog()
    with ThreadServer(naming_judge(log)) as azure:
        assert main(["--db", str(db_path), "endpoints", "add", "az", "--kind", "azure", "--base-url",
                     f"http://127.0.0.1:{azure.port}", "--model", "../../admin", "--api-version", "2024-10-21",
                     "--api-key-env", "AZURE_OPENAI_API_KEY"]) == 1
        assert "deployment name '../../admin' is not one" in capsys.readouterr().err
        assert main(["--db", str(db_path), "endpoints", "add", "az", "--kind", "azure", "--base-url",
                     f"http://127.0.0.1:{azure.port}", "--model", "grader", "--api-version", "2024-10-21",
                     "--api-key-env", "AZURE_OPENAI_API_KEY"]) == 0
        # a grader file's model names the deployment of an azure endpoint: it stays a path segment
        library.graders.create(BinaryJudge(key="j", criteria="c", endpoint="az", model="../../admin?x=1#"))
        library.datasets.create("d", [qa("s1", "q", "answer for SAMPLE-s1")])
        with pytest.raises(StudioError, match="deployment name '../../admin\\?x=1#' is not one"):
            run_grader(library, "j", "d", RunOptions(use_cache=False))
    assert log.requests == []


@pytest.mark.parametrize("url", ["https://alice:hunter2@api.example/v1", "https://hunter2@api.example/v1",
                                 "http://:hunter2@127.0.0.1:8080/v1", "ftp://alice:hunter2@api.example/v1"])
def test_a_base_url_with_credentials_is_refused_like_a_proxys(
    url: str, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="holds credentials, which the library never stores"):
        EndpointConfig(name="e", base_url=url, model="m")
    assert main(["--db", str(db_path), "endpoints", "add", "e", "--base-url", url, "--model", "m"]) == 1
    said = capsys.readouterr().err
    assert "holds credentials" in said and "hunter2" not in said


def test_a_base_url_port_that_is_no_number_is_a_sentence(db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db_path), "endpoints", "add", "e", "--base-url", "http://127.0.0.1:99999999/v1",
                 "--model", "m"]) == 1
    assert "port is not a number" in capsys.readouterr().err


@pytest.mark.parametrize("status", [200, 401])
def test_endpoints_test_masks_an_echoed_key_in_every_form(
    status: int, db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    with ThreadServer(echoing(status)) as server:  # type: ignore[arg-type]
        assert main(["--db", str(db_path), "endpoints", "add", "e", "--base-url",
                     f"http://127.0.0.1:{server.port}/v1", "--model", "m", "--api-key-env", "JUDGE_API_KEY"]) == 0
        capsys.readouterr()
        code = main(["--db", str(db_path), "endpoints", "test", "e"])
        out = capsys.readouterr()
        assert code == (0 if status == 200 else 1)
        assert "***" in out.out + out.err  # the echo was there, and masked
        assert_masked(out.out + out.err)
        assert main(["--db", str(db_path), "endpoints", "test", "e", "--json"]) == (0 if status == 200 else 1)
        out = capsys.readouterr()
        assert_masked(out.out + out.err)


def test_a_generated_datasets_provenance_masks_an_echoed_key(
    library: Library, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    with ThreadServer(echoing(401)) as server:  # type: ignore[arg-type]
        assert main(["--db", str(db_path), "endpoints", "add", "e", "--base-url",
                     f"http://127.0.0.1:{server.port}/v1", "--model", "m", "--api-key-env", "JUDGE_API_KEY"]) == 0
        library.datasets.create("src", [qa("s1", "q", "a"), qa("s2", "q", "a")])
        try:
            generate(library, "gen", GenerationSettings(source="src", endpoint="e"))
        except StudioError as exc:
            assert_masked(str(exc))
    provenance = json.dumps(library.datasets.get("gen").provenance)
    assert "error_examples" in provenance and "***" in provenance
    assert_masked(provenance)
