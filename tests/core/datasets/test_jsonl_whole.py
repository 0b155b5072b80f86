"""JSONL (and a NUL in any dataset file) read whole or refused with the file and line, on SQLite and
PostgreSQL alike: PostgreSQL's text holds no NUL, so a NUL refused only by the database would fail
there alone, after the rows before it were sent (issue 43)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.datasets import DatasetError, DatasetStream, read_dataset
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    """Every test here on both backends."""
    return any_db


@pytest.fixture
def library(db_path: Path | str) -> Iterator[Library]:
    lib = Library.open(db_path)
    yield lib
    lib.close()


ROW = '{"id": "s%d", "input": "q", "completion": "a"}\n'


def rows(n: int) -> str:
    return "".join(ROW % i for i in range(n))


def refused_import(library: Library, path: Path) -> DatasetError:
    """The import refuses ``path`` and keeps nothing of it."""
    with pytest.raises(DatasetError) as caught:
        stream = DatasetStream(path)
        library.datasets.create("d", stream.rows(), format=stream.format)
    assert library.datasets.list(include_deleted=True) == []
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar_one() == 0
    return caught.value


@pytest.mark.parametrize(("name", "tail", "where"), [
    ("d.jsonl", '{"id": "x", "input": "q", "completion": "a\\u0000b"}\n', "in a string (written \\u0000)"),
    ("d.jsonl", '{"id": "x", "input": "q", "metadata": {"k\\u0000": 1}, "completion": "a"}\n', "in a string"),
    ("d.jsonl", '{"id": "x", "input": "q", "completion": "a\x00b"}\n', "at column 43"),
    ("d.csv", "x,q,a\x00b\n", "at column 6"),
])
def test_a_nul_is_refused_with_its_file_and_line(tmp_path: Path, library: Library, name: str, tail: str,
                                                 where: str) -> None:
    path = tmp_path / name
    # more rows than one chunk of the import, so rows were already sent when the NUL comes
    body = rows(3000) if name.endswith(".jsonl") else "id,input,completion\n" + "".join(
        f"s{i},q,a\n" for i in range(2999))
    path.write_text(body + tail, encoding="utf-8")
    error = refused_import(library, path)
    assert str(error).startswith(f"{path}:3001: a NUL character (\\x00) {where}"), error


def test_an_escaped_backslash_before_u0000_is_text_not_a_nul(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "x", "input": "q", "completion": "C:\\\\u0000"}\n', encoding="utf-8")
    stream = DatasetStream(path)
    library.datasets.create("d", stream.rows(), format=stream.format)
    assert library.datasets.sample("d", 0).completion == "C:\\u0000"


@pytest.mark.parametrize(("cut", "said"), [
    ('{"id": "s10", "input": "q", "compl', "not valid JSON (Unterminated string starting at column 29)"),
    ('{"id": "s10", "input": "q"', "not valid JSON (Expecting ',' delimiter at the end of the line)"),
])
def test_a_file_cut_in_the_middle_of_its_last_line_is_refused(tmp_path: Path, library: Library, cut: str,
                                                              said: str) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(rows(10) + cut, encoding="utf-8")
    error = refused_import(library, path)
    assert error.line == 11 and error.message == said


def test_a_file_cut_in_the_middle_of_a_character_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(rows(2).encode() + '{"id": "s2", "input": "caf\u00e9"}'.encode()[:-3])
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 3 and "not UTF-8" in caught.value.message


def test_a_bom_and_crlf_lines_read(tmp_path: Path) -> None:
    """Windows editors write a BOM and CRLF: the first row is a row, not a JSON error on line 1."""
    path = tmp_path / "win.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + rows(3).replace("\n", "\r\n").encode())
    parsed = read_dataset(path)
    assert [s.id for s in parsed.samples] == ["s0", "s1", "s2"]
    later = tmp_path / "late.jsonl"  # a BOM anywhere but the start is not one
    later.write_bytes(rows(1).encode() + b"\xef\xbb\xbf" + rows(1).encode())
    with pytest.raises(DatasetError) as caught:
        read_dataset(later)
    assert caught.value.line == 2


@pytest.mark.parametrize("choices", ['["text"]', "[1]", '[{"message": "text"}]', '[{"message": ["a"]}]'])
def test_an_openai_row_whose_choices_are_not_objects_names_its_line(tmp_path: Path, choices: str) -> None:
    """It ended in a traceback (AttributeError), exit 70, and a bug report in the window."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"item": {"question": "q"}, "sample": {"output_text": "a"}}\n'
                    f'{{"item": {{"question": "q"}}, "sample": {{"choices": {choices}}}}}\n', encoding="utf-8")
    for read in (lambda: read_dataset(path), lambda: list(DatasetStream(path).rows())):
        with pytest.raises(DatasetError) as caught:
            read()
        assert caught.value.line == 2 and "'sample.choices' must be a list of" in caught.value.message
    good = tmp_path / "good.jsonl"
    good.write_text('{"item": {"question": "q"}, "sample": {"choices": [{"message": {"content": "hi"}}]}}\n'
                    '{"item": {"question": "q"}, "sample": {"choices": [{}]}}\n', encoding="utf-8")
    assert [s.completion for s in read_dataset(good).samples] == ["hi", None]
