"""An import's hot path stores plain rows without making a Sample of each: what it stores must be the
sample the full path stores, and a row it cannot take must get the full path's error on its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from studio.core.datasets import DatasetError, DatasetStream
from studio.core.datasets.shapes import row_to_sample, row_to_stored
from studio.core.models import Sample, SampleRow
from studio.core.store import Library

ROWS: list[dict[str, Any]] = [
    {"id": "a", "messages": [{"role": "user", "content": "2 + 2?"}], "completion": "4", "metadata": {"expected": "4"}},
    {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "héllo ✓ \u2028"},
                  {"role": "assistant", "content": "hi"}]},
    {"id": 70, "messages": [{"role": "user"}], "completion": "", "expected": "", "extra": [1, 2.5, None, True]},
    {"messages": [], "metadata": {"id": 0, "score": 1e16, "deep": {"x": [{"y": "z"}]}}},
    {"messages": [{"role": "user", "content": "q"}], "completion": {"role": "assistant", "content": "dict"}},
    {"messages": [{"role": "user", "content": "q", "name": "bob"}], "completion": "named turn"},
    {"messages": [{"role": "user", "content": "q"}], "completion": "c", "metadata": {"v": float("nan")}},
    {"messages": [{"role": "user", "content": "q"}], "expected": 42, "metadata": None},
    {"messages": [{"role": "assistant", "content": "only"}], "metadata": {"expected": ["a", "b"]}},
    {"messages": [{"role": "tool", "content": "t"}, {"role": "assistant", "content": ""}], "metadata": None,
     "q\"uote": "\\", "deep": {"a": {"b": {"c": {"d": {"e": [1, "\x01\u2028é"]}}}}}, "flag": False},
    # numbers as pydantic writes them: a small float's exponent, integers of 64 bits and beyond
    {"messages": [{"role": "user", "content": "q"}], "metadata": {"small": 1e-7, "big": 1e300, "neg": -0.0},
     "u64": 18446744073709551615, "i64": -9223372036854775808, "huge": 2**70, "inf": float("inf")},
    {"messages": [{"content": "x", "role": "user"}], "id": "\u00e9\U0001f600", "metadata": {}},
]


@pytest.mark.parametrize("row", ROWS)
def test_a_stored_row_is_the_sample_the_full_path_stores(row: dict[str, Any]) -> None:
    full = SampleRow.of(row_to_sample(json.loads(json.dumps(row)), "adaptive", "9"))
    fast = row_to_stored(json.loads(json.dumps(row)), "adaptive", "9")
    assert fast[:4] == full[:4]
    assert fast.data == full.data  # byte for byte: the stored text does not depend on the path
    assert Sample.model_validate_json(fast.data) == Sample.model_validate_json(full.data)


BAD = [
    ('{"messages": "not a list"}', "'messages' must be a list"),
    ('{"messages": [{"role": 3, "content": "x"}]}', "messages:"),
    ('{"messages": [{"content": "no role"}]}', "messages:"),
    ('{"messages": [{"role": "user", "content": "x", "colour": "red"}]}', "messages:"),
    ('{"messages": [], "metadata": [1]}', "'metadata' must be an object"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_a_bad_row_gets_the_same_sentence_on_its_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "fine"}]}\n' + line + "\n", encoding="utf-8")
    errors = []
    for read in (lambda s: list(s), lambda s: list(s.rows())):
        with pytest.raises(DatasetError) as caught:
            read(DatasetStream(path, "adaptive"))
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert f"{path}:2:" in errors[0] and message in errors[0]


def test_an_import_of_rows_reads_back_as_the_samples(tmp_path: Path, library: Library) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    library.datasets.create("fast", DatasetStream(path).rows())
    library.datasets.create("full", DatasetStream(path))
    assert library.datasets.samples("fast") == library.datasets.samples("full")
    assert len(library.datasets.samples("fast")) == len(ROWS)
    with pytest.raises(DatasetError, match="duplicate sample id 'a' \\(first on line 1\\)"):
        path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps(ROWS[0]) + "\n", encoding="utf-8")
        library.datasets.create("dup", DatasetStream(path).rows())
