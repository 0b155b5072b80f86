"""API keys reach the server but never the library file, an export or the logs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

from judge_helpers import add_endpoint, library_bytes, qa

from studio.cli import main
from studio.core.judges.http.credentials import KEYRING_SERVICE, resolve_api_key, set_keyring_key
from studio.core.models import BinaryJudge, RangeJudge

KEYRING_KEY = "sk-test-KEYRING-5f2c9a71d3"
ENV_KEY = "sk-test-ENV-8b41e07c66"



def test_keys_are_sent_but_never_stored_or_logged(
    library, db_path, fake_judge, score, memory_keyring, monkeypatch, caplog, capsys
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("JUDGE_API_KEY", ENV_KEY)
    add_endpoint(library, fake_judge, name="kr")
    set_keyring_key("kr", KEYRING_KEY)
    add_endpoint(library, fake_judge, name="env", api_key_env="JUDGE_API_KEY")
    judge = BinaryJudge(key="b", criteria="c", endpoint="kr")

    outcomes = score(judge, [qa("s", "q", "a [[fault:500x1]]", "a")])
    assert fake_judge.last_authorization == f"Bearer {KEYRING_KEY}"
    outcomes += score(RangeJudge(key="r", criteria="c", endpoint="env"), [qa("s", "q", "a")])
    assert fake_judge.last_authorization == f"Bearer {ENV_KEY}"
    assert all(o.status == "ok" for o in outcomes)

    # even a library that logs the header by mistake is scrubbed
    logging.getLogger("httpx").debug("headers: {'authorization': 'Bearer %s'}", KEYRING_KEY)
    logging.getLogger("httpcore.http11").debug("x-api-key=%s", ENV_KEY)

    assert main(["--db", str(db_path), "endpoints", "list", "--json"]) == 0
    exported = capsys.readouterr().out
    assert json.loads(exported)[0]["api_key"] in {"keyring", "env JUDGE_API_KEY (set)"}

    library.engine.dispose()  # let SQLite write everything back to the file
    stored = library_bytes(db_path)
    everything = [stored.decode("latin-1"), caplog.text, exported]
    everything += [json.dumps(o.model_dump(mode="json")) for o in outcomes]
    for key in (KEYRING_KEY, ENV_KEY):
        for text in everything:
            assert key not in text
    assert "***" in caplog.text


def test_keyring_wins_over_env_and_cli_stores_stdin_key(
    library, db_path, fake_judge, memory_keyring, monkeypatch, capsys
) -> None:
    import io

    monkeypatch.setenv("JUDGE_API_KEY", ENV_KEY)
    monkeypatch.setattr("sys.stdin", io.StringIO(KEYRING_KEY + "\n"))
    args = ["--db", str(db_path), "endpoints", "add", "k", "--base-url", fake_judge.base_url]
    assert main([*args, "--model", "m", "--api-key-env", "JUDGE_API_KEY", "--api-key-stdin"]) == 0
    assert memory_keyring.store[(KEYRING_SERVICE, "k")] == KEYRING_KEY
    from studio.core.store.endpoints import EndpointRepository

    config = EndpointRepository.of(library).get("k")
    assert resolve_api_key(config) == KEYRING_KEY
    assert KEYRING_KEY.encode() not in library_bytes(db_path)
    assert main(["--db", str(db_path), "endpoints", "remove", "k"]) == 0
    assert (KEYRING_SERVICE, "k") not in memory_keyring.store
    assert KEYRING_KEY not in capsys.readouterr().out


#: the keyring backend a process picks, and whether SecretStorage was imported to pick it: through
#: the studio's door (``credentials._keyring``) or keyring's own (argv[1])
BACKEND_CHILD = """
import json, sys
if sys.argv[1] == "studio":
    from studio.core.judges.http.credentials import _keyring
    chosen = _keyring().get_keyring()
else:
    import keyring
    chosen = keyring.get_keyring()
print(json.dumps([str(chosen), sys.modules.get("secretstorage") is not None]))
"""


def _backend(door: str, bus: str | None) -> tuple[str, bool]:
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    if bus is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
    done = subprocess.run([sys.executable, "-c", BACKEND_CHILD, door], capture_output=True, text=True,
                          timeout=60, env=env, check=True)
    chosen, imported = json.loads(done.stdout.strip().splitlines()[-1])
    return chosen, imported


def test_no_session_bus_the_keyring_picks_its_backend_without_importing_secret_storage() -> None:
    """With no D-Bus session bus named, SecretService can never be reached (jeepney finds the bus
    only through DBUS_SESSION_BUS_ADDRESS), so a judge run's key lookup does not import SecretStorage
    (jeepney, cryptography: ~0.015 s of its start-up, bench/README.md section 10), and the keyring
    still picks the backend it picks on its own; with a bus named, SecretStorage is asked as before."""
    ours, imported = _backend("studio", None)
    assert not imported
    assert ours == _backend("keyring", None)[0]
    bus = "unix:path=/nonexistent/grader-studio-test-bus"
    ours, imported = _backend("studio", bus)
    assert imported  # the backend is asked (and refuses: no daemon at that address)
    assert ours == _backend("keyring", bus)[0]
