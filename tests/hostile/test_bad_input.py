"""Hostile files get a sentence naming the line, in bounded memory, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from peak_memory import GROWTH_LIMIT_MB, PeakGrowth

from studio.core.datasets.readers import DatasetError, read_dataset
from studio.core.models import files

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))


#: marked when the module's first test starts: every hostile input below is within one bound
MEMORY = PeakGrowth()


@pytest.fixture(autouse=True, scope="module")
def _memory_mark() -> None:
    MEMORY.mark()


def memory_bounded() -> bool:
    return MEMORY.mb() < GROWTH_LIMIT_MB


def test_a_yaml_alias_bomb_is_refused_with_its_line() -> None:
    text = "kind: function\nkey: bomb\nsource: |\n  async def grade(t): return 1.0\n" + LAUGHS
    with pytest.raises(files.DefinitionError) as caught:
        files.loads(text, "bomb.grader.yaml")
    assert str(caught.value) == "bomb.grader.yaml:6: (file): YAML aliases (*a) are not allowed in a grader file"
    assert memory_bounded()


def test_a_deeply_nested_definition_is_refused() -> None:
    with pytest.raises(files.DefinitionError) as caught:
        files.loads("[" * 200_000 + "]" * 200_000, "deep.grader.json")
    assert "nested more than" in str(caught.value)


def test_a_latin1_definition_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x.grader.yaml"
    path.write_bytes("kind: function\nkey: x\nname: café\n".encode("latin-1"))
    with pytest.raises(files.DefinitionError) as caught:
        files.load(path)
    assert str(caught.value) == f"{path}:3: (file): not UTF-8 text (save the file as UTF-8)"


def test_invalid_utf8_in_a_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"input": "a", "completion": "b"}\n{"input": "caf\xe9", "completion": "b"}\n')
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 2 and "not UTF-8" in caught.value.message


def test_invalid_utf8_in_a_csv_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"input,completion\na,b\ncaf\xe9,b\n")
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 3 and "not UTF-8" in caught.value.message


def test_a_200000_deep_jsonl_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"input": "a", "completion": "b"}\n{"input": "a", "completion": "b", "metadata": {"x": '
                     + b"[" * 200_000 + b"]" * 200_000 + b"}}\n")
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 2 and "nested more than" in caught.value.message


def test_a_line_longer_than_a_row_may_be_is_refused_with_its_number(tmp_path: Path) -> None:
    """A file of one endless line (no line break) is refused once a row's bound is read, not read
    whole into memory."""
    from studio.core.datasets.readers import MAX_ROW_BYTES

    path = tmp_path / "d.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"input": "a", "completion": "b"}\n{"input": "')
        fh.write(b"x" * (MAX_ROW_BYTES + 1))
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 2 and "longer than 16 MB" in caught.value.message


def test_the_cli_names_the_line_of_a_latin1_grader(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "latin.py"
    path.write_bytes("async def grade(thread):\n    # café\n    return 1.0\n".encode("latin-1"))
    for args in (["validate", str(path)], ["graders", "create", str(path)]):
        result = cli(*args)
        assert result.returncode != 0
        assert f"{path}:2: not UTF-8 text (byte 0xe9)" in result.stderr + result.stdout, result
        assert "Traceback" not in result.stderr


def test_the_cli_refuses_a_13_mb_grader_with_a_sentence(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "big.py"
    path.write_text("async def grade(thread):\n    return 1.0\n" + "# padding\n" * 1_300_000)
    result = cli("validate", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "the limit is 64 KiB" in result.stdout
    assert "worker exited" not in result.stdout


@pytest.mark.skipif(os.name != "posix", reason="POSIX rlimits")
def test_memory_stays_bounded_after_the_hostile_inputs() -> None:
    assert memory_bounded()


HUGE = "9" * 100_000


@pytest.mark.parametrize("suffix", [".grader.yaml", ".grader.json"])
def test_a_100000_digit_number_in_a_definition_names_its_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"big{suffix}"
    if suffix.endswith("json"):
        path.write_text('{"kind": "builtin", "key": "big", "function": "numeric_match",\n'
                        f' "options": {{"tolerance": {HUGE}}}}}\n')
    else:
        path.write_text(f"kind: builtin\nkey: big\nfunction: numeric_match\noptions:\n  tolerance: {HUGE}\n")
    with pytest.raises(files.DefinitionError) as caught:
        files.load(path)
    line = 2 if suffix.endswith("json") else 5
    assert str(caught.value).startswith(f"{path}:{line}: (file): a number has 100,000 digits")
    files.loads(f'kind: builtin\nkey: big\nfunction: exact_match\ndescription: "{HUGE}"\n')  # quoted: text


@pytest.mark.parametrize("where", ["dataset", "csv", "labels"])
def test_a_100000_digit_number_in_data_names_its_line(tmp_path: Path, where: str) -> None:
    from studio.core.datasets.label_files import read_labels

    if where == "csv":  # a CSV cell holding JSON: kept as text, not a traceback
        path = tmp_path / "d.csv"
        path.write_text(f'input,completion,extra\nq,a,"[{HUGE}]"\n')
        [sample] = read_dataset(path).samples
        assert sample.fields["extra"] == f"[{HUGE}]"
        return
    path = tmp_path / "d.jsonl"
    if where == "labels":
        path.write_text('{"sample_id": "ok", "label": "PASS"}\n' f'{{"sample_id": "big", "score": {HUGE}}}\n')
    else:
        path.write_text('{"id": "ok", "input": "q", "completion": "a"}\n'
                        f'{{"id": "big", "input": "q", "completion": "a", "metadata": {{"n": {HUGE}}}}}\n')
    with pytest.raises(DatasetError) as caught:
        if where == "labels":
            read_labels(path, ["ok", "big"])
        else:
            read_dataset(path)
    assert caught.value.line == 2 and caught.value.message.startswith("a number has 100,000 digits")


def test_a_nul_in_a_sample_id_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "ok", "input": "q", "completion": "a"}\n'
                    '{"id": "a\\u0000b", "input": "q", "completion": "a"}\n')
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert caught.value.line == 2 and "NUL" in caught.value.message
    from studio.core.datasets.readers import DatasetStream

    with pytest.raises(DatasetError) as caught:  # the import's hot path (stored rows) too
        list(DatasetStream(path).rows())
    assert caught.value.line == 2 and "NUL" in caught.value.message


def test_the_cli_says_one_sentence_for_huge_numbers_and_nul(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    grader = tmp_path / "big.grader.yaml"
    grader.write_text(f"kind: builtin\nkey: big\nfunction: numeric_match\noptions:\n  tolerance: {HUGE}\n")
    data = tmp_path / "d.jsonl"
    data.write_text(f'{{"id": "big", "input": "q", "completion": {HUGE}}}\n')
    nul = tmp_path / "nul.jsonl"
    nul.write_text('{"id": "a\\u0000", "input": "q", "completion": "a"}\n')
    for args in (("validate", str(grader)), ("graders", "create", str(grader)),
                 ("datasets", "import", str(data)), ("datasets", "import", str(nul))):
        result = cli(*args)
        assert result.returncode == 1, (args, result)
        assert "Traceback" not in result.stderr, result.stderr
        assert (":5: " if "grader" in args[-1] else ":1: ") in result.stderr, result.stderr
        assert ("digits" if "nul" not in args[-1] else "NUL") in result.stderr, result.stderr
