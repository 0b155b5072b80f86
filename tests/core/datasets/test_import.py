from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.core.datasets import DatasetError, DatasetStream, read_dataset
from studio.core.store import Library


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def adaptive_row(i: int) -> dict:
    return {"id": f"s{i}", "messages": [{"role": "user", "content": f"What is {i}+{i}?"}],
            "completion": str(2 * i), "metadata": {"expected": str(2 * i)}}


def test_ten_thousand_rows_import(tmp_path: Path, library: Library) -> None:
    path = write_jsonl(tmp_path / "big.jsonl", [adaptive_row(i) for i in range(10_000)])
    parsed = read_dataset(path)
    record = library.datasets.create("big", parsed.samples, format=parsed.format)
    assert record.sample_count == 10_000 and record.format == "adaptive"
    sample = library.datasets.sample("big", 9_999)
    assert sample.id == "s9999" and sample.expected == "19998"
    assert sample.thread().completion() == "19998"


def test_broken_line_is_named_and_nothing_imported(tmp_path: Path, library: Library) -> None:
    rows: list[object] = [adaptive_row(i) for i in range(100)]
    rows[41] = '{"messages": [ broken'
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert info.value.line == 42 and "bad.jsonl:42" in str(info.value)
    assert library.datasets.list() == []


def test_shape_error_names_line(tmp_path: Path) -> None:
    rows: list[object] = [adaptive_row(0), {"messages": "not a list", "completion": "x"}]
    with pytest.raises(DatasetError, match=r":2: 'messages' must be a list"):
        read_dataset(write_jsonl(tmp_path / "shape.jsonl", rows))


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="duplicate sample id 's1' \\(first on line 1\\)"):
        read_dataset(write_jsonl(tmp_path / "dup.jsonl", [adaptive_row(1), adaptive_row(1)]))


@pytest.mark.parametrize(
    ("row", "fmt", "completion", "expected"),
    [
        ({"item": {"question": "2+2?", "reference": "4"}, "sample": {"output_text": "4"}}, "openai", "4", "4"),
        ({"input": "Capital of France?", "ground_truth": "Paris", "submission": "Paris",
          "rubric_vars": {"tone": "formal"}}, "letta", "Paris", "Paris"),
        ({"question": "2+2?", "target": "4", "output_text": "four"}, "mka1", "four", "4"),
        ({"messages": [{"role": "document", "content": "doc"}, {"role": "user", "content": "q"},
                       {"role": "assistant", "content": "a"}], "metadata": {"expected": "a"}}, "adaptive", "a", "a"),
    ],
)
def test_platform_row_shapes_are_detected(tmp_path: Path, row: dict, fmt: str, completion: str, expected: str) -> None:
    parsed = read_dataset(write_jsonl(tmp_path / "one.jsonl", [row]))
    assert parsed.format == fmt
    sample = parsed.samples[0]
    assert sample.completion == completion and sample.expected == expected
    assert sample.fields  # the original row is kept for the platform's own grader


def test_csv_with_json_cells(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('id,question,output,expected,metadata\n1,2+2?,4,4,"{""topic"": ""math""}"\n2,3+3?,6,6,\n')
    parsed = read_dataset(path)
    assert [s.completion for s in parsed.samples] == ["4", "6"]
    assert parsed.samples[0].metadata["topic"] == "math"


def test_csv_bad_row_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("question,output\na,b\nc,d,e\n")
    with pytest.raises(DatasetError, match="rows.csv:3: more values"):
        read_dataset(path)


def test_a_streamed_import_is_all_or_nothing_across_chunks(tmp_path: Path, library: Library) -> None:
    # the stream is stored a chunk at a time inside one transaction: rows already inserted from
    # earlier chunks are rolled back when a line near the end is wrong (here a duplicate id)
    rows: list[object] = [adaptive_row(i) for i in range(12_000)]
    rows.append(adaptive_row(3))
    stream = DatasetStream(write_jsonl(tmp_path / "dup.jsonl", rows))
    assert stream.format == "adaptive"
    with pytest.raises(DatasetError, match=r"dup.jsonl:12001: duplicate sample id 's3' \(first on line 4\)"):
        library.datasets.create("big", stream, format=stream.format)
    assert library.datasets.list(include_deleted=True) == []
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar_one() == 0

