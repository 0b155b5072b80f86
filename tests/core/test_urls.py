"""Library locations (studio/core/urls.py): which strings are URLs, how a server URL is read, and
``masked``, the one rendering every surface shows, which never shows a password, whatever form it
takes (user:password, ``?password=``, any case of the key, percent-encoded characters, '@' or ':'
inside it, URLs SQLAlchemy's parser reads differently from urllib's). docs/security.md."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from studio.core.errors import bug_report, masked_argv
from studio.core.urls import (
    UrlProblem,
    is_server_url,
    is_url,
    mask_secrets,
    mask_urls,
    masked,
    parse_server_url,
    scheme_of,
    url_secrets,
)

SECRET_FREE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12)
#: every printable ASCII character and a few beyond: '@', ':', '/', '?', '#', '%', '&', '=', ' ' ...
PASSWORDS = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("éß€✓"),
                    min_size=3, max_size=24)
SECRET_KEYS = st.sampled_from(["password", "PASSWORD", "PassWord", "sslpassword", "SSLPassword", "pass%77ord"])


def forms(secret: str) -> set[str]:
    """The ways a password could leak: as typed, percent-encoded either way, percent-decoded."""
    return {secret, quote(secret, safe=""), quote_plus(secret), quote(secret), unquote(secret)}


def assert_hidden(shown: str, secret: str) -> None:
    for form in forms(secret):
        assert form not in shown, (form, shown)


@settings(max_examples=400, deadline=None)
@given(user=SECRET_FREE, password=PASSWORDS, host=SECRET_FREE, db=SECRET_FREE, scheme=st.sampled_from(
    ["postgresql", "postgres", "POSTGRESQL", "postgresql+psycopg"]), port=st.none() | st.integers(1, 65535),
       where=st.sampled_from(["userinfo", "raw userinfo", "query"]), key=SECRET_KEYS,
       extra=st.sampled_from(["", "sslmode=require", "application_name=x"]))
def test_a_server_url_is_never_shown_with_its_password(user: str, password: str, host: str, db: str, scheme: str,
                                                       port: int | None, where: str, key: str, extra: str) -> None:
    hostport = host + (f":{port}" if port else "")
    if where == "userinfo":
        url = f"{scheme}://{user}:{quote(password, safe='')}@{hostport}/{db}" + (f"?{extra}" if extra else "")
    elif where == "raw userinfo":  # typed as is, '@' ':' '/' '?' '#' and all
        url = f"{scheme}://{user}:{password}@{hostport}/{db}" + (f"?{extra}" if extra else "")
    else:
        url = f"{scheme}://{user}@{hostport}/{db}?" + "&".join(
            p for p in (extra, f"{key}={quote_plus(password)}") if p)
    frame = f"{scheme}://{user}@{hostport}/{db}?{extra}&{key}=***…:"  # everything but the password
    for form in forms(password):
        assume(form not in frame)
    shown = masked(url)
    assert_hidden(shown, password)
    # and in any text that quotes it (a driver's error), with or without knowing the URL
    message = f"could not connect to {url}: password authentication failed"
    assert_hidden(mask_secrets(message, url_secrets(url)), password)
    if not any(ch.isspace() for ch in password):  # free text: a URL ends at a blank
        assert_hidden(mask_urls(message), password)
    assert_hidden(masked_argv(["grader-studio", "--db", url, f"--db={url}"]), password)
    try:
        parts = parse_server_url(url)
    except UrlProblem as exc:  # refused: the sentence shows nothing past the scheme
        assert_hidden(str(exc), password)
        assert shown == f"{scheme}://…"
        return
    assert password in parts.secrets
    if where == "query":
        assert f"{key}=***" in shown


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://alice:s3cret@db.example:5432/graders", "postgresql://alice@db.example:5432/graders"),
    ("postgresql://alice@db.example/graders?sslmode=verify-full&password=s3cret",
     "postgresql://alice@db.example/graders?sslmode=verify-full&password=***"),
    ("postgres://alice:p%40ss%3Aw@[::1]:5433/g?SSLPassword=k", "postgres://alice@[::1]:5433/g?SSLPassword=***"),
    ("postgresql:///graders?host=/var/run/postgresql", "postgresql:///graders?host=/var/run/postgresql"),
    ("postgresql://alice@db.example/graders", "postgresql://alice@db.example/graders"),
    # SQLAlchemy reads password 'p', host 'ss@db' here; urllib reads password 'p@ss': refused, shown as the scheme
    ("postgresql://alice:p@ss@db/graders", "postgresql://…"),
    ("postgresql://alice:pa/ss@db/graders", "postgresql://…"),
    ("postgresql://alice:pa#ss@db/graders", "postgresql://…"),
    ("mysql://root:s3cret@db/graders", "mysql://…"),
    ("postgres:/alice:s3cret@db/graders", "postgres:…"),
    ("/home/alice/library.sqlite", "/home/alice/library.sqlite"),
])
def test_masked_examples(url: str, shown: str) -> None:
    assert masked(url) == shown


def test_a_server_url_is_read_as_its_parts_decoded() -> None:
    parts = parse_server_url("postgresql://al%40ice:p%40ss%3Aw%2F@[::1]:5433/my%2Fdb?sslmode=require&pass%77ord=x%2By")
    assert (parts.username, parts.password, parts.host, parts.port, parts.database) == \
        ("al@ice", "p@ss:w/", "::1", 5433, "my/db")
    assert parts.secrets == ("p@ss:w/", "x+y")
    # a ':' in the password needs no quoting (the first ':' ends the user name)
    assert parse_server_url("postgresql://u:a:b@h/d").password == "a:b"


@pytest.mark.parametrize("value", ["postgresql://u@h:0/d", "postgresql://u@h:99999/d", "postgresql://u@h:54x/d",
                                   "postgresql://u@[::1/d", "postgresql://u:p@s@h/d", "postgresql://u@h/d?x=a@b"])
def test_a_malformed_server_url_is_refused_in_a_sentence_without_its_parts(value: str) -> None:
    with pytest.raises(UrlProblem) as refused:
        parse_server_url(value)
    assert str(refused.value).startswith("cannot read the library URL postgresql://…: ")


@pytest.mark.parametrize(("value", "scheme"), [
    ("postgresql+psycopg2://u@h/d", "postgresql+psycopg2"), ("postgres:/u@h/d", "postgres"),
    ("sqlite+x://a", "sqlite+x"), ("mysql://h/d", "mysql"), ("file:lib.sqlite", "file"),
    ("file:///tmp/lib.sqlite", "file"), ("C:\\x\\lib.sqlite", "C"), ("c:lib", "c"), ("my:lib.sqlite", "my"),
    ("./my:lib.sqlite", None), ("dir/a:b.sqlite", None), ("lib.sqlite", None), ("/tmp/x:y", None),
    (":memory:", None), ("~/lib.sqlite", None), ("1abc:x", None),
])
def test_a_scheme_before_any_slash_makes_a_url(value: str, scheme: str | None) -> None:
    if os.name == "nt" and scheme is not None and len(scheme) == 1:
        scheme = None  # a drive
    assert scheme_of(value) == scheme
    assert is_url(value) == (scheme is not None)
    assert is_server_url(value) == (scheme is not None and scheme.lower() in ("postgresql", "postgres")
                                    and "://" in value)


def test_a_bug_report_is_its_owners_alone_and_masks_every_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://alice:s3cr%40t@db.example/graders?sslpassword=k3y-k3y"
    monkeypatch.setattr(sys, "argv", ["grader-studio", "--db", url, f"--db={url}", "graders", "list"])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        raise RuntimeError(f"could not use {url}")
    except RuntimeError as exc:
        sentence = bug_report(exc)
    (report,) = tmp_path.glob("grader-studio-bug-*.txt")
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    text = report.read_text()
    assert "postgresql://alice@db.example/graders?sslpassword=***" in text and "graders list" in text
    for secret in ("s3cr%40t", "s3cr@t", "k3y-k3y"):
        assert secret not in text and secret not in sentence
