"""Reading dataset files (JSONL, CSV) into samples, all or nothing, naming the line that is wrong."""

from __future__ import annotations

import itertools
import json
import json.scanner
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar

import orjson
from pydantic import BaseModel

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import Sample, SampleRow
from studio.core.safe_files import file_problem, open_regular, open_regular_text

from .csv_records import CsvRefused, csv_records, nul
from .shapes import FORMATS, RowError, detect_format, row_to_sample, row_to_stored


class DatasetError(StudioError, ValueError):
    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class ParsedDataset(BaseModel):
    format: str
    samples: list[Sample]


#: Python's own bound on reading a decimal integer (``sys.get_int_max_str_digits()``): reading a longer
#: one costs quadratic time, and the ValueError it raises would end in a traceback
MAX_DIGITS = 4300


class TooManyDigits(ValueError):
    """A JSON integer longer than ``MAX_DIGITS`` digits, refused while parsing."""


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise TooManyDigits(f"a number has {digits:,} digits (the studio reads integers of at most "
                            f"{MAX_DIGITS:,} digits; quote it to keep it as text)")
    return int(text)


#: one decoder (and its C scanner) for every row: ``json.loads`` with ``parse_int`` would build both
#: again for each call, a third of the parse of a short row
_DECODER = json.JSONDecoder(parse_int=_int)
class _Identified(Protocol):
    """A converted row: a ``Sample`` or a ``SampleRow``, each with its sample id."""

    @property
    def id(self) -> str: ...


_Row = TypeVar("_Row", bound=_Identified)

_SCAN: Callable[[str, int], tuple[JsonValue, int]] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed types it as a class taking itself


def loads_json(text: str) -> JsonValue:
    """``json.loads`` that refuses integers longer than ``MAX_DIGITS`` with ``TooManyDigits``."""
    return _DECODER.decode(text)


#: nesting of one row's JSON far beyond any real sample (messages -> content parts -> fields)
MAX_DEPTH = 100

#: the longest line (one row) a dataset file may have: a row is parsed whole, so without a bound one
#: line with no line break (a 2 GB file of one string) would be read whole into memory; a long
#: conversation is a few hundred kB, and a sandboxed grader's worker takes a sample of up to 64 MB
MAX_ROW_BYTES = 16 * 1024 * 1024
#: the longest line that cannot be nested more than ``MAX_DEPTH`` deep (each bracket opened is closed)
_SHALLOW = 2 * MAX_DEPTH + 1
#: how much of a file is read at a time
_BLOCK = 1 << 20


def _too_deep(value: JsonValue, limit: int = MAX_DEPTH) -> bool:
    """Iterative, so that a hostile row cannot exhaust the stack of the code that checks it."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if children and depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines without their b"\\n" (split where iterating a binary file splits), numbered
    from 1, a block at a time: at most ``MAX_ROW_BYTES`` of one line is ever held, a longer line is
    refused with its number as soon as it is that long."""
    number = 0
    partial: list[bytes] = []  # the pieces of a line that runs on past the blocks read so far
    held = 0
    with open_regular(path, buffering=0) as handle:
        while block := handle.read(_BLOCK):
            lines = block.split(b"\n")
            last = lines.pop()  # the start of the next line (b"" when the block ends with a line break)
            if lines:
                if partial:
                    partial.append(lines[0])
                    lines[0] = b"".join(partial)
                    partial, held = [], 0
                for line in lines:
                    number += 1
                    if len(line) > MAX_ROW_BYTES:
                        raise _too_long(path, number)
                    yield number, line
            if last:
                partial.append(last)
                held += len(last)
                if held > MAX_ROW_BYTES:
                    raise _too_long(path, number + 1)
    if partial:
        yield number + 1, b"".join(partial)


def _too_long(path: Path, number: int) -> DatasetError:
    return DatasetError(str(path), number, f"the line is longer than {MAX_ROW_BYTES // (1024 * 1024)} MB "
                        "(a row of a dataset is at most that long); is it one JSON value per line?")


def jsonl_rows(path: Path) -> Iterator[tuple[int, JsonValue]]:
    """(line, value) for each JSON line of a file, blank lines skipped; ``DatasetError`` names the first
    line that is not one storable JSON value (not UTF-8, not JSON, too long or deep, a lone surrogate, a NUL)."""
    scan, count = _SCAN, str.count
    for number, raw in _lines(path):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(str(path), number, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                               f"{len(raw[: exc.start].decode('utf-8', 'replace')) + 1}); save the file as UTF-8") from None
        if number == 1 and text.startswith("\ufeff"):  # a UTF-8 BOM (Windows editors write one)
            text = text[1:]
        # the common line: one JSON object from its first character to its last, read by the C
        # scanner straight away; anything else (blank, padded, broken, a huge number, too deep)
        # takes the careful path below, which also words the error
        try:
            row, end = scan(text, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end != len(text):
            if not text.strip():
                continue
            row = _careful_row(path, number, text)
        # nesting is at most the number of brackets that open, and a valid line closes each: a line
        # of at most 2 * MAX_DEPTH + 1 characters cannot be too deep; a longer one has its brackets
        # counted (C speed) and is walked only when it could be
        elif len(text) > _SHALLOW and count(text, "[") + count(text, "{") > MAX_DEPTH and _too_deep(row):
            raise _nested(path, number)
        # only a \u escape can make a lone surrogate (a UTF-8 line holds none)
        if "\\u" in text and _lone_surrogate(row):
            raise DatasetError(str(path), number, _SURROGATE)
        # only a \u0000 escape can make a NUL (the JSON reader refuses the character itself)
        if "\\u0000" in text and holds_nul(row):
            raise DatasetError(str(path), number, nul("in a string (written \\u0000)"))
        yield number, row


_SURROGATE = ("a string holds a lone surrogate (a \\ud800-\\udfff escape without its pair), which is not text; "
              "write the character itself, or both halves of its pair")


def _lone_surrogate(value: JsonValue) -> bool:
    """Whether a string (a key or a value) in ``value`` is not UTF-8-encodable: it holds half of a
    surrogate pair alone, which JSON's \\u escapes allow and no text file, database or grader
    can store. orjson's encoder tells in C when there is none (it refuses a surrogate, and only an
    integer beyond 64 bits besides); otherwise the strings are walked."""
    try:
        orjson.dumps(value)
        return False
    except orjson.JSONEncodeError:
        pass
    for text in _strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


def _strings(value: JsonValue) -> Iterator[str]:
    """Every string in ``value``, keys included; iterative (a hostile row cannot exhaust the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            yield item
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)


def holds_nul(value: JsonValue) -> bool:
    """Whether a string (a key or a value) in ``value`` holds a NUL character."""
    return any("\x00" in text for text in _strings(value))


def _nested(path: Path, number: int) -> DatasetError:
    return DatasetError(str(path), number, f"the JSON is nested more than {MAX_DEPTH} levels deep")


def _careful_row(path: Path, number: int, line: str) -> JsonValue:
    text = line.rstrip("\r")  # a trailing line break would move the error to "line 2, column 1"
    try:
        row = loads_json(text)
    except json.JSONDecodeError as exc:
        if "\x00" in text:  # the character itself, which JSON refuses (as a control character)
            raise DatasetError(str(path), number, nul(f"at column {text.index(chr(0)) + 1}")) from None
        where = "at the end of the line" if exc.pos >= len(text) else f"at column {exc.pos + 1}"
        # json's messages that end in "at" ("Unterminated string starting at") say where after it
        raise DatasetError(str(path), number, f"not valid JSON ({exc.msg.removesuffix(' at')} {where})") from None
    except TooManyDigits as exc:
        raise DatasetError(str(path), number, str(exc)) from None
    except RecursionError:
        raise _nested(path, number) from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _too_deep(row):
        raise _nested(path, number)
    return row


def csv_rows(path: Path, cell: Callable[[str], JsonValue] = str) -> Iterator[tuple[int, JsonObject]]:
    """(the line a record starts on, {column: ``cell(value)``}) for each record of a CSV file, read by
    the one strict reader (``csv_records``: a quote left open, a ragged row, a stray quote are refused,
    never half-read); an empty value is None. A UTF-8 BOM (a spreadsheet's "CSV UTF-8") is not part of
    the first column's name."""
    try:
        with open_regular_text(path, encoding="utf-8-sig", newline="") as handle:
            for number, record in csv_records(handle, MAX_ROW_BYTES):
                # an empty cell is no value (as pandas, and so Letta's CSV loader, reads it); in JSONL
                # an explicit "" stays a value
                yield number, {k: (None if v == "" else cell(v)) for k, v in record.items()}
    except CsvRefused as exc:
        raise DatasetError(str(path), exc.line, exc.message) from None
    except UnicodeDecodeError:
        raise DatasetError(str(path), _line_at(path), "not UTF-8 text; save the file as UTF-8") from None


def _line_at(path: Path) -> int | None:
    """Line of the first byte that is not UTF-8 (the decoder's offset is within its buffer)."""
    for number, raw in _lines(path):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return number
    return None


def _maybe_json(value: str | None) -> JsonValue:
    """CSV cells holding JSON objects/lists (messages, metadata) are decoded."""
    if value and value[:1] in "[{":
        try:
            decoded = loads_json(value)
        except (json.JSONDecodeError, TooManyDigits, RecursionError):
            return value
        # JSON no row could hold stays the cell's text: too deep, a lone surrogate, a NUL (\u0000)
        unstorable = "\\u" in value and (_lone_surrogate(decoded) or holds_nul(decoded))
        return value if unstorable or _too_deep(decoded) else decoded
    return value


def read_rows(path: Path) -> Iterator[tuple[int, JsonValue]]:
    if path.suffix.lower() == ".csv":
        return csv_rows(path, _maybe_json)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return jsonl_rows(path)
    raise DatasetError(str(path), None, "unsupported file type: use .jsonl or .csv")


class DatasetStream:
    """A file's samples one at a time, checked as they come: iterating raises ``DatasetError`` at the
    first bad line, so a consumer that stores them in one transaction (``DatasetRepository.create``)
    keeps all or nothing while holding only a chunk in memory. ``format`` is known on creation
    (the first row is read then).

    Sample ids must be unique in a dataset. Iterating checks that in memory (a dict of every id);
    a consumer that stores the samples can take the check over in bounded memory instead
    (``leave_ids_to_store``: ``DatasetRepository.create`` asks the database once the rows are in)."""

    def __init__(self, path: str | Path, fmt: str | None = None, limit: int | None = None) -> None:
        self.path = Path(path)
        if fmt is not None and fmt not in FORMATS:
            raise DatasetError(str(self.path), None, f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
        if (problem := file_problem(self.path)) is not None:  # a FIFO or a device would never end
            raise DatasetError(str(self.path), None, problem)
        self.limit = limit
        self._rows = read_rows(self.path)
        self._first = next(self._rows, None)
        if self._first is None:
            raise DatasetError(str(self.path), None, "the file holds no rows")
        number, row = self._first
        if fmt is None:
            if not isinstance(row, dict):
                raise DatasetError(str(self.path), number, "a row must be a JSON object")
            fmt = detect_format(row)
        self.format: str = fmt
        self.count = 0
        self._ids_in_memory = True

    def __iter__(self) -> Iterator[Sample]:
        return self._each(row_to_sample)

    def rows(self) -> StoredRows:
        """The samples in the library's stored form (``DatasetRepository.create`` takes them): a
        plain row is checked by type and never becomes a ``Sample`` (an import's hot path); the same
        errors as iterating, naming the same lines."""
        return StoredRows(self)

    def leave_ids_to_store(self) -> Callable[[str, int, int], DatasetError]:
        """Stop checking sample ids in memory (call it before iterating): the caller finds the first
        repeated id itself (the row, counted from 0, where an id comes a second time, and where it
        came first) and raises what the returned function makes of it, the error iterating would
        have raised at that row."""
        self._ids_in_memory = False
        return self.duplicate

    def duplicate(self, sample_id: str, first: int, again: int) -> DatasetError:
        """The error for ``sample_id`` at row ``again`` (counted from 0), first at row ``first``:
        the rows' line numbers are found by reading the file again up to there (an error path)."""
        lines: dict[int, int] = {}
        for n, (number, _) in enumerate(read_rows(self.path)):
            if n in (first, again):
                lines[n] = number
            if n >= again:
                break
        return _duplicate(str(self.path), lines.get(again), sample_id, lines.get(first))

    def _each(self, convert: Callable[[JsonValue, str, str], _Row]) -> Iterator[_Row]:
        path, fmt, limit = str(self.path), self.format, self.limit
        seen: dict[str, int] = {}  # sample id -> line: the one per-row thing kept (a few dozen bytes)
        first_line = seen.setdefault if self._ids_in_memory else None
        rows = self._rows
        first, self._first = self._first, None
        if first is None:
            return
        count = self.count
        for number, row in itertools.chain((first,), rows):
            count += 1
            try:
                sample = convert(row, fmt, str(count))
            except RowError as exc:
                raise DatasetError(path, number, f"{exc} (format {fmt})") from None
            if first_line is not None and (line := first_line(sample.id, number)) != number:
                raise _duplicate(path, number, sample.id, line)
            self.count = count
            yield sample
            if limit is not None and count >= limit:
                return


class StoredRows:
    """``DatasetStream.rows()``: iterable once, in the stored form; ``leave_ids_to_store`` as the
    stream's."""

    def __init__(self, stream: DatasetStream) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[SampleRow]:
        return self.stream._each(row_to_stored)

    def leave_ids_to_store(self) -> Callable[[str, int, int], DatasetError]:
        return self.stream.leave_ids_to_store()


def _duplicate(path: str, line: int | None, sample_id: str, first_line: int | None) -> DatasetError:
    return DatasetError(path, line, f"duplicate sample id {sample_id!r} (first on line {first_line})")


def read_dataset(path: str | Path, fmt: str | None = None, limit: int | None = None) -> ParsedDataset:
    """Parse a whole file into memory (a preview, a small file); the first bad line raises
    ``DatasetError`` and nothing is returned. A big import streams ``DatasetStream`` instead."""
    stream = DatasetStream(path, fmt, limit)
    return ParsedDataset(format=stream.format, samples=list(stream))
