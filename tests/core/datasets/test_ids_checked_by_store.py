"""An import leaves the sample ids' check to the database (``DatasetStream.leave_ids_to_store``), so
its memory does not grow with the file: the same errors on the same lines as the stream's own
check, on SQLite and PostgreSQL, and nothing imported."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from studio.core.datasets import DatasetError, DatasetStream, read_dataset
from studio.core.datasets.readers import MAX_ROW_BYTES
from studio.core.store import Library


@pytest.fixture
def db_path(any_db: Path | str) -> Path | str:
    return any_db


def row(sample_id: str) -> str:
    return json.dumps({"id": sample_id, "messages": [{"role": "user", "content": f"q {sample_id}"}], "completion": "a"})


def both_errors(path: Path, library: Library) -> tuple[str, str]:
    """The error of reading the file (the stream's own check) and of importing it (the store's)."""
    with pytest.raises(DatasetError) as read:
        read_dataset(path)
    with pytest.raises(DatasetError) as imported:
        library.datasets.create("d", DatasetStream(path).rows())
    assert library.datasets.list(include_deleted=True) == []
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar_one() == 0
    return str(read.value), str(imported.value)


def test_a_repeated_id_is_named_on_its_lines_with_blank_lines_between(tmp_path: Path, library: Library) -> None:
    # blank lines make a row's line differ from its place: the lines are the file's
    lines = [row(f"s{i}") for i in range(5000)] + [row("s7")] + [row("s3")]
    path = tmp_path / "d.jsonl"
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    read, imported = both_errors(path, library)
    assert read == imported == f"{path}:10001: duplicate sample id 's7' (first on line 15)"


def test_an_id_thrice_is_named_where_it_comes_again_first(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([row("a"), row("b"), row("b"), row("a"), row("b")]) + "\n", encoding="utf-8")
    read, imported = both_errors(path, library)
    assert read == imported == f"{path}:3: duplicate sample id 'b' (first on line 2)"


def test_a_repeated_id_before_a_broken_line_is_the_error(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([row("a"), row("a"), row("b"), '{"broken'] + [row(f"z{i}") for i in range(3000)]) + "\n",
                    encoding="utf-8")
    read, imported = both_errors(path, library)
    assert read == imported == f"{path}:2: duplicate sample id 'a' (first on line 1)"


def test_a_broken_line_before_a_repeated_id_is_the_error(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([row("a"), row("b"), "[1, 2", row("a")]) + "\n", encoding="utf-8")
    read, imported = both_errors(path, library)
    assert read == imported
    assert imported.startswith(f"{path}:3: not valid JSON")


def test_a_repeated_id_in_a_csv_with_a_cell_over_two_lines(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.csv"
    path.write_text('id,input,completion\nx,"two\nlines",a\ny,q,b\nx,q,c\n', encoding="utf-8")
    read, imported = both_errors(path, library)
    # a record is named by the line it starts on (x's first record spans lines 2 and 3)
    assert read == imported == f"{path}:5: duplicate sample id 'x' (first on line 2)"


def test_unique_ids_are_all_imported(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(row(f"s{i}") for i in range(4500)) + "\n", encoding="utf-8")
    record = library.datasets.create("d", DatasetStream(path).rows())
    assert record.sample_count == 4500
    assert [s.id for s in library.datasets.samples("d", offset=4498)] == ["s4498", "s4499"]


def test_iterating_a_stream_still_checks_its_ids_itself(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([row("a"), row("a")]) + "\n", encoding="utf-8")
    for read in (list, lambda s: list(s.rows())):
        with pytest.raises(DatasetError, match=r":2: duplicate sample id 'a' \(first on line 1\)"):
            read(DatasetStream(path))


def test_a_csv_line_longer_than_a_row_may_be_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("input,completion\nq,a\nq,")
        fh.write("x" * (3 * MAX_ROW_BYTES))
        fh.write("\nq,a\n")
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError) as caught:
            read_dataset(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.line == 3 and "longer than 16 MB" in caught.value.message
    assert peak < 2.5 * MAX_ROW_BYTES  # the line is 3x that: it was not held whole


def test_a_csv_cell_over_the_csv_modules_limit_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("input,completion\nq,a\nq," + "x" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 3 and "a value is longer than 128 kB" in caught.value.message
