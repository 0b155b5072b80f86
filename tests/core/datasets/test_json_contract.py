"""What a JSONL line may hold and how it is stored (docs/architecture.md, "A dataset import"): the
json module's reading (NaN, Infinity, repeated keys, integers up to 4,300 digits), the stored text in
pydantic's own form whichever path wrote it, and a lone surrogate refused with its line instead of
failing when the row is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.datasets import DatasetError, DatasetStream, read_dataset
from studio.core.store import Library

HEAD = '{"id":"a","messages":[{"role":"user","content":"q"}],"completion":"c","metadata":'


def stored(tmp_path: Path, library: Library, line: str) -> str:
    path = tmp_path / "d.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    library.datasets.create("d", DatasetStream(path).rows())
    with library.engine.connect() as conn:
        data: str = conn.exec_driver_sql("SELECT data FROM samples").scalar_one()
    return data


@pytest.mark.parametrize(("metadata", "written"), [
    ('{"v":NaN,"w":Infinity,"x":-Infinity}', '{"v":null,"w":null,"x":null}'),  # pydantic writes them as null
    ('{"k":1,"j":2,"k":3}', '{"k":3,"j":2}'),  # the last wins, in the first one's place
    ('{"n":123456789012345678901234567890}', '{"n":123456789012345678901234567890}'),  # beyond 64 bits: exact
    ('{"u":18446744073709551615,"i":-9223372036854775808}', '{"u":18446744073709551615,"i":-9223372036854775808}'),
    ('{"f":1e-7,"g":1E16,"h":0.1,"z":-0.0}', '{"f":1e-7,"g":1e+16,"h":0.1,"z":-0.0}'),  # numbers as pydantic writes them
    ('{"e":"\\ud83d\\ude00 \\u00e9 \\u2028"}', '{"e":"\U0001f600 é \u2028"}'),  # an escaped pair is one character
])
def test_a_value_is_read_and_stored_as_before(tmp_path: Path, library: Library, metadata: str, written: str) -> None:
    data = stored(tmp_path, library, HEAD + metadata + "}")
    assert data == ('{"id":"a","messages":[{"role":"user","content":"q"}],"completion":"c","metadata":' + written
                    + ',"fields":{"id":"a","metadata":' + written + "}}")


def test_an_integer_longer_than_4300_digits_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(HEAD + '{}}\n' + HEAD.replace('"a"', '"b"') + '{"n":' + "9" * 5000 + "}}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"d.jsonl:2: a number has 5,000 digits"):
        read_dataset(path)


@pytest.mark.parametrize("line", [
    HEAD + '{"s":"\\ud800"}}',  # in a value
    '{"id":"a","messages":[{"role":"user","content":"q\\udc00"}]}',  # in a message
    HEAD + '{"\\uDBFF x":1}}',  # in a key
    HEAD + '{"n":123456789012345678901234567890,"s":["\\ud800"]}}',  # beside an integer orjson refuses
])
def test_a_lone_surrogate_is_refused_with_its_line(tmp_path: Path, library: Library, line: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(HEAD + "{}}\n\n" + line + "\n", encoding="utf-8")
    for read in (read_dataset, lambda p: library.datasets.create("d", DatasetStream(p).rows())):
        with pytest.raises(DatasetError) as caught:
            read(path)
        assert caught.value.line == 3 and "lone surrogate" in caught.value.message
    assert library.datasets.list(include_deleted=True) == []


def test_a_csv_cell_whose_json_holds_a_lone_surrogate_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('input,completion,metadata\nq,a,"{""s"": ""\\ud800""}"\n', encoding="utf-8")
    sample = read_dataset(path).samples[0]  # as a cell that is not JSON: its text, escape and all
    assert sample.fields["metadata"] == '{"s": "\\ud800"}' and sample.metadata == {}
