"""The boundary of outside values (studio/core/outside.py): whatever text or JSON arrives, what
is stored is the same on SQLite and PostgreSQL and reads back as stored; what is printed obeys no
escape sequence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hostile_text import ESCAPES, hostile_json, hostile_text, nested, nested_text
from hypothesis import HealthCheck, given, settings
from sqlalchemy import text

from studio.core.outside import (
    MAX_DEPTH,
    decode_outside,
    json_text,
    loads_outside,
    printable,
    printable_json,
    storable_json,
    storable_text,
)
from studio.core.store import Library

_CONTROLS = {chr(c) for c in range(0x20) if chr(c) not in "\t\n"} | {chr(c) for c in range(0x7F, 0xA0)}


@given(hostile_text)
def test_storable_text_holds_no_nul_and_encodes(value: str) -> None:
    stored = storable_text(value)
    assert "\x00" not in stored
    stored.encode("utf-8")  # no lone surrogate left: every driver's encoder takes it
    assert storable_text(stored) == stored  # once is enough


def test_storable_text_keeps_what_is_storable_and_says_what_it_replaced() -> None:
    assert storable_text("plain ✓ 😀 \x1b[2J") == "plain ✓ 😀 \x1b[2J"  # ESC is stored: shown visibly later
    assert storable_text("a\x00b") == "a\ufffdb"
    assert storable_text("\ud800x\udfff") == "\ufffdx\ufffd"
    assert storable_text("\ud83d\ude00") == "😀"  # a pair split in two code points is one character


@given(hostile_json)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_json_text_is_json_postgresql_reads(value: object) -> None:
    stored = json_text(value)
    assert "\x00" not in stored and "\\u0000" not in stored
    stored.encode("utf-8")
    decoded = json.loads(stored)  # JSON (no NaN), and as deep as MAX_DEPTH at most
    assert json_text(decoded) == stored


def test_deep_json_is_cut_at_max_depth_not_a_recursion_error() -> None:
    cut = storable_json(nested(10_000))
    depth = 0
    while isinstance(cut, list):
        cut, depth = cut[0], depth + 1
    assert depth == MAX_DEPTH and "nested deeper than" in cut
    with pytest.raises(ValueError, match="nested deeper"):
        loads_outside(nested_text(100_000))
    value, stored = decode_outside(nested_text(500))  # decodable, but cut when stored
    assert stored == json_text(value) and stored.count("[") == MAX_DEPTH


def test_decode_outside_keeps_clean_text_as_it_came() -> None:
    body = '{"a": [1, 2.5, "x"], "b": null}'
    assert decode_outside(body) == ({"a": [1, 2.5, "x"], "b": None}, body)
    value, stored = decode_outside('{"a": "\\u0000\\ud800", "n": NaN}')
    # the value keeps NaN a number (what reads it refuses it as one); the stored text names it
    assert value["a"] == "\ufffd\ufffd" and math.isnan(value["n"])
    assert json.loads(stored) == {"a": "\ufffd\ufffd", "n": "NaN"}


@given(hostile_text)
def test_printable_leaves_no_control_character(value: str) -> None:
    shown = printable(value)
    assert not _CONTROLS & set(shown)
    if "\x1b" not in value and not _CONTROLS & set(value):
        assert shown == value


@pytest.mark.parametrize("sequence", ESCAPES)
def test_every_escape_sequence_is_shown_not_obeyed(sequence: str) -> None:
    shown = printable(f"before{sequence}after")
    assert "\x1b" not in shown and "\x9b" not in shown and "\x07" not in shown and "\r" not in shown
    assert shown.startswith("before") and shown.endswith("after")


@given(hostile_json)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_printable_json_keeps_every_value_exactly(value: object) -> None:
    encoded = json.dumps(storable_json(value), ensure_ascii=False)
    shown = printable_json(encoded)
    assert json.loads(shown) == json.loads(encoded)
    assert not _CONTROLS & set(shown)


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


@given(value=hostile_text, details=hostile_json)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_what_is_stored_reads_back_identically_on_both_backends(library: Library, value: str, details: object) -> None:
    """The same hostile value stored through the boundary reads back the same on SQLite and on
    PostgreSQL (a text column, and JSON that PostgreSQL's jsonb reads)."""
    stored, stored_json = storable_text(value), json_text(details)
    with library.engine.begin() as conn:
        conn.execute(text("DELETE FROM judge_cache"))
        conn.execute(text("INSERT INTO judge_cache (key, response, created_at) VALUES ('t', :r, CURRENT_TIMESTAMP)"),
                     {"r": stored})
        conn.execute(text("INSERT INTO judge_cache (key, response, created_at) VALUES ('j', :r, CURRENT_TIMESTAMP)"),
                     {"r": stored_json})
        back = conn.execute(text("SELECT response FROM judge_cache WHERE key = 't'")).scalar_one()
        extracted = conn.execute(text("SELECT json_extract(response, '$') FROM judge_cache WHERE key = 'j'")).scalar_one()
    assert back == stored
    assert extracted is None or isinstance(extracted, (str, int, float))


@given(rationale=hostile_text, error=hostile_text, details=hostile_json, raw=hostile_json)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_outcome_writes_and_reads_back_on_both_backends(library: Library, rationale: str, error: str,
                                                            details: object, raw: object) -> None:
    """The run writer's entry (``outcome_values``): a grader's or judge's outcome holding anything is
    written on both backends, and its row reads back as what the boundary made of it."""
    from studio.core.models import BuiltinGrader, Outcome
    from studio.core.models.thread import Sample
    from studio.core.store.runs import outcome_values, row_outcome

    if not library.graders.list():
        library.graders.create(BuiltinGrader(key="g", function="exact_match"))
        library.datasets.create("d", [Sample(id="s", messages=[], completion="a")])
    grader, dataset = library.graders.get("g"), library.datasets.get("d")
    run = library.runs.create(grader.id, grader.current_version, dataset.id, 1)
    outcome = Outcome(status="invalid", score=0.0, rationale=rationale, error=error,
                      details={"x": details}, raw=raw)
    row = outcome_values(run.id, 0, "s", outcome)
    library.runs.write_rows([row])
    (stored,) = library.runs.results(run.id)
    assert stored["rationale"] == storable_text(rationale) and stored["error"] == storable_text(error)
    assert stored["details"] == json.loads(json_text({"x": details}))
    assert row_outcome(row).rationale == stored["rationale"]


@given(hostile_text)
def test_every_cli_line_shows_controls_visibly(value: str) -> None:
    """The CLI's entry (``output.CommandGuard``, every line printed): no control character but the
    studio's own colours, TAB, line feeds and its own carriage returns reaches the terminal."""
    import io

    from studio.cli.output import CommandGuard

    out = io.StringIO()
    guard = CommandGuard(out)
    guard.write(f"result: {value}\n")
    guard.close_guard()
    written = out.getvalue()
    assert not (_CONTROLS - {"\r"}) & set(written.replace("\x1b[31m", "").replace("\x1b[0m", "")
                                           .replace("\x1b[1m", "").replace("\x1b[90m", "")
                                           .replace("\x1b[32m", "").replace("\x1b[33m", "").replace("\x1b[34m", ""))
    assert "\r" not in written
