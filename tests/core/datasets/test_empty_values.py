"""An empty reference is a value, an id of 0 is an id (issue 12): both used to read as 'missing'."""

from __future__ import annotations

import json
from pathlib import Path

from studio.core.datasets.readers import read_dataset


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_empty_string_reference_is_kept(tmp_path: Path) -> None:
    for key, fmt_row in [("ground_truth", {"input": "q"}), ("target", {"input": "q"}),
                         ("expected", {"input": "q"}), ("reference", {"input": "q"})]:
        rows = [{**fmt_row, "output": "a", key: ""}, {**fmt_row, "output": "b", key: "b"}]
        samples = read_dataset(write(tmp_path / f"{key}.jsonl", rows)).samples
        assert [s.expected for s in samples] == ["", "b"], key


def test_missing_reference_stays_none(tmp_path: Path) -> None:
    samples = read_dataset(write(tmp_path / "d.jsonl", [{"input": "q", "output": "a", "expected": None}])).samples
    assert samples[0].expected is None


def test_integer_id_zero_is_an_id(tmp_path: Path) -> None:
    rows = [{"id": 0, "input": "q", "output": "a"}, {"id": 1, "input": "q", "output": "b"}]
    samples = read_dataset(write(tmp_path / "d.jsonl", rows)).samples
    assert [s.id for s in samples] == ["0", "1"]
