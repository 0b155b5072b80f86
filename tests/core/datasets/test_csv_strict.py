"""A CSV file is read whole or refused, naming the line its broken record starts on (issue 43).

Python's csv module, left to itself, reads a quote left open as a value swallowing the rows after
it: three rows came back as two and the import said nothing. Legal CSV (a quoted value over several
lines, CRLF, a BOM, blank lines) still reads exactly as written.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from studio.core.datasets import DatasetError, DatasetStream, read_dataset
from studio.core.datasets.csv_records import CsvRefused, csv_records
from studio.core.datasets.label_files import read_labels
from studio.core.store import Library

HEADER = "question,output\n"


def write(tmp_path: Path, text: str, name: str = "d.csv", bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def refused(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    return caught.value


@pytest.mark.parametrize(("body", "line"), [
    # an unterminated quote in the first, a middle and the last row: the rows after it were swallowed
    ('"q1 open,a1\nq2,a2\nq3,a3\n', 2),
    ('q1,a1\n"q2 open,a2\nq3,a3\n', 3),
    ('q1,a1\nq2,a2\nq3,"a3 open\n', 4),
    ('q1,a1\nq2,a2\nq3,"a3 open', 4),  # no line break at the end either
    # the quote closes further down, but text follows it: the user's "three rows as two"
    ('"q1,a1\nq2,"a2"\nq3,a3\n', 2),
    ('q1,"a1\nq2,a2\nq3,"a3"\n', 2),
    # a quote inside an unquoted value, a space before an opening quote
    ('q1,a1\nq2,a"2\nq3,a3\n', 3),
    ('q1,a1\nq2, "a2"\n', 3),
    # ragged rows: fewer and more values than the header has columns
    ('q1,a1\nq2\nq3,a3\n', 3),
    ('q1,a1\nq2,a2,extra\n', 3),
    ('q1,"a\n1"\nq2\n', 4),  # after a legal multi-line value, the short row's own line
    # CRLF, a BOM and blank lines do not move the line named
    ('q1,a1\r\n\r\nq2,"a2 open\r\nq3,a3\r\n', 4),
])
@pytest.mark.parametrize("bom", [False, True])
def test_a_broken_csv_is_refused_naming_the_line_its_record_starts_on(tmp_path: Path, body: str, line: int,
                                                                       bom: bool) -> None:
    error = refused(write(tmp_path, HEADER + body, bom=bom))
    assert error.line == line, error
    assert str(error).startswith(f"{tmp_path / 'd.csv'}:{line}: ")
    assert "\n" not in error.message  # one sentence on one line


def test_the_sentences_say_what_is_wrong(tmp_path: Path) -> None:
    assert "never closed" in refused(write(tmp_path, HEADER + 'q1,a1\n"q2,a2\nq3,a3\n')).message
    assert "text follows a closing quote on line 4" in refused(
        write(tmp_path, HEADER + '"q1,a1\nq2,a2\nq3,"a3"\n')).message
    assert "a quote inside a value that is not quoted at column 5" in refused(
        write(tmp_path, HEADER + 'q1,a"1\n')).message
    assert "a space before the quote that opens a value at column 5" in refused(
        write(tmp_path, HEADER + 'q1, "a1"\n')).message
    assert refused(write(tmp_path, HEADER + "q1\n")).message.startswith(
        "fewer values (1) than the header has columns (2)")
    assert "the column 'question' twice" in refused(write(tmp_path, "question,question\na,b\n")).message
    nul = refused(write(tmp_path, HEADER + "q1,a1\nq2,a\x002\n"))
    assert nul.line == 3 and "NUL character (\\x00) at column 5" in nul.message


def test_legal_csv_reads_every_row_as_written(tmp_path: Path) -> None:
    text = ('question,output\r\n'
            '"a question\r\nover two lines",a1\r\n'
            '\r\n'
            'q2,"say ""hi"", twice"\r\n'
            'q3,"three\nlines\nhere"\r\n'
            '"",a4\r\n')
    samples = read_dataset(write(tmp_path, text, bom=True)).samples
    assert [s.input_text() for s in samples] == ["a question\r\nover two lines", "q2", "q3", ""]
    assert [s.completion for s in samples] == ["a1", 'say "hi", twice', "three\nlines\nhere", "a4"]
    assert "question" in samples[0].fields  # the BOM is not part of the first column's name


def test_records_are_named_by_the_line_they_start_on(tmp_path: Path) -> None:
    text = 'question,output\n\n"one\ntwo\nthree",a\n\nq,b\n'
    with write(tmp_path, text).open(encoding="utf-8", newline="") as handle:
        assert [n for n, _ in csv_records(handle, 1 << 20)] == [3, 7]


def test_a_record_running_on_past_the_bound_is_refused_without_being_held(tmp_path: Path) -> None:
    """Many quoted values, each under csv's own limit, spread over many lines: the record is
    refused once it is that long, not read on to the end of the file."""
    cell = '"' + "x\n" * 100 + '"'
    text = "a,b\n" + ",".join([cell] * 20) + "\n"
    with pytest.raises(CsvRefused) as caught:
        list(csv_records(io.StringIO(text, newline=""), 2000))
    assert caught.value.line == 2 and "runs on past" in caught.value.message


def test_nothing_is_stored_when_a_csv_is_refused(tmp_path: Path, library: Library) -> None:
    rows = "".join(f"q{i},a{i}\n" for i in range(5000)) + '"q5000 open,a\nq5001,a\n'
    stream = DatasetStream(write(tmp_path, HEADER + rows))
    with pytest.raises(DatasetError, match=r"d.csv:5002: not valid CSV"):
        library.datasets.create("d", stream.rows(), format=stream.format)
    assert library.datasets.list(include_deleted=True) == []
    with library.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM samples").scalar_one() == 0


def test_the_cli_refuses_a_broken_csv_and_imports_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, HEADER + 'q1,a1\n"q2 open,a2\nq3,a3\n', name="bad.csv")
    result = cli("datasets", "import", str(path))
    assert result.returncode == 1, result  # a refused file, as every dataset the CLI refuses
    assert f"{path}:3: not valid CSV" in result.stderr and "nothing was imported" in result.stderr
    assert "Traceback" not in result.stderr
    listed = cli("datasets", "list", "--json")
    assert listed.returncode == 0 and listed.stdout.strip() == "[]"


def test_label_files_use_the_same_reader(tmp_path: Path) -> None:
    path = write(tmp_path, 'sample_id,label\ns1,PASS\n"s2,FAIL\ns3,PASS\n', name="labels.csv")
    with pytest.raises(DatasetError) as caught:
        read_labels(path, ["s1", "s2", "s3"])
    assert caught.value.line == 3 and "never closed" in caught.value.message
    good = write(tmp_path, '\ufeffsample_id,label,note\ns1,PASS,"a note, with a comma"\n', name="good.csv")
    [label] = read_labels(good, ["s1"])
    assert label.verdict == "PASS" and label.note == "a note, with a comma"


# ---- properties: whatever csv.writer writes reads back as written; one quote lost is refused ---------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    width = draw(st.integers(1, 4))
    header = draw(st.lists(_TEXT.filter(lambda t: t.strip() != ""), min_size=width, max_size=width, unique=True))
    rows = draw(st.lists(st.lists(_TEXT, min_size=width, max_size=width), max_size=6))
    return header, rows


def written(header: list[str], rows: list[list[str]], terminator: str, quoting: int) -> str:
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator=terminator, quoting=quoting)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _blank(line: str) -> bool:  # a line of spaces alone is no record (as a blank line)
    return "\n" not in line and "\r" not in line and not line.strip()


def readable(header: list[str], rows: list[list[str]], terminator: str, quoting: int) -> bool:
    """What csv.writer writes is CSV: not a single column of spaces (a blank line), and not a lone
    CR left unquoted (Python 3.11's writer quotes only its own terminator's characters)."""
    if quoting == csv.QUOTE_ALL:
        return True
    if len(header) == 1 and any(_blank(r[0]) for r in rows):
        return False
    return terminator == "\r\n" or not any("\r" in value for value in header + [v for r in rows for v in r])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tables(), st.sampled_from(["\n", "\r\n"]), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
def test_what_csv_writes_reads_back_whole(table: tuple[list[str], list[list[str]]], terminator: str,
                                          quoting: int) -> None:
    header, rows = table
    assume(readable(header, rows, terminator, quoting))
    read = list(csv_records(io.StringIO(written(header, rows, terminator, quoting), newline=""), 1 << 20))
    assert [list(record.values()) for _, record in read] == rows


@settings(max_examples=200, deadline=None)
@given(tables(), st.sampled_from(["\n", "\r\n"]), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
       st.data())
def test_a_lost_quote_is_refused_within_the_record_it_is_in(table: tuple[list[str], list[list[str]]],
                                                            terminator: str, quoting: int,
                                                            data: st.DataObject) -> None:
    """The refusal names a line of the record the quote was lost from: its first, or (a lost opening
    quote splits a value over lines into records of its own) a later one of its lines; never a line
    before it, nor one after it."""
    header, rows = table
    assume(readable(header, rows, terminator, quoting))
    text = written(header, rows, terminator, quoting)
    quotes = [i for i, c in enumerate(text) if c == '"']
    assume(quotes)
    cut = data.draw(st.sampled_from(quotes))
    good = list(csv_records(io.StringIO(text, newline=""), 1 << 20))
    ends = [len(written(header, rows[:n], terminator, quoting)) for n in range(len(rows) + 1)]
    record = sum(1 for end in ends if end <= cut)  # 0: the header, n: rows[n - 1]
    first = 1 if record == 0 else good[record - 1][0]
    last = len(io.StringIO(text[:ends[record]], newline="").readlines())
    with pytest.raises(CsvRefused) as caught:
        list(csv_records(io.StringIO(text[:cut] + text[cut + 1:], newline=""), 1 << 20))
    assert first <= caught.value.line <= last, (text, cut, caught.value)


@settings(max_examples=200, deadline=None)
@given(tables(), st.sampled_from(["\n", "\r\n"]), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
       st.data())
def test_a_quote_added_anywhere_is_refused(table: tuple[list[str], list[list[str]]], terminator: str, quoting: int,
                                           data: st.DataObject) -> None:
    """Every quote of CSV comes in a pair (a quoted value's two, a doubled one inside it): one more,
    wherever it lands, leaves a quote open or out of place, and the file is refused, never read as
    other rows."""
    header, rows = table
    assume(readable(header, rows, terminator, quoting))
    text = written(header, rows, terminator, quoting)
    at = data.draw(st.integers(0, len(text)))
    with pytest.raises(CsvRefused):
        list(csv_records(io.StringIO(text[:at] + '"' + text[at:], newline=""), 1 << 20))
