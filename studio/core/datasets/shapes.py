"""The platforms' dataset row shapes, each turned into our ``Sample``.

| format   | a row looks like                                                        |
|----------|-------------------------------------------------------------------------|
| adaptive | ``{messages: [{role, content}], completion, metadata}``                 |
| openai   | ``{item: {...}, sample: {output_text, ...}}``                           |
| letta    | ``{input, ground_truth, rubric_vars, submission?}``                     |
| mka1     | ``{question/prompt, target, output_text?/extracted_output?, ...}``      |
| flat     | CSV-like columns: input/question/prompt, completion/output, expected    |

The original row is kept in ``Sample.fields`` so a platform's grader sees its own row unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Literal

import orjson
from pydantic import ValidationError

from studio.core.json_types import JsonObject, JsonValue
from studio.core.models import Sample, SampleRow, Turn

DatasetFormat = Literal["adaptive", "openai", "letta", "mka1", "flat"]
FORMATS: tuple[str, ...] = ("adaptive", "openai", "letta", "mka1", "flat")

INPUT_KEYS = ("input", "question", "prompt", "query", "user")
OUTPUT_KEYS = ("completion", "output_text", "extracted_output", "output", "submission", "response", "answer_text")
EXPECTED_KEYS = ("expected", "target", "ground_truth", "reference", "reference_answer", "answer", "label")


class RowError(ValueError):
    """A row that does not fit its format; the reader adds the line number."""


def detect_format(row: JsonObject) -> DatasetFormat:
    if "messages" in row:
        return "adaptive"
    if isinstance(row.get("item"), dict):
        return "openai"
    if "ground_truth" in row or "rubric_vars" in row:
        return "letta"
    if "target" in row:
        return "mka1"
    return "flat"


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _first(row: JsonObject, keys: tuple[str, ...]) -> JsonValue:
    for key in keys:
        if key in row and row[key] is not None and row[key] != "":
            return row[key]
    return None


def _value(row: JsonObject, keys: tuple[str, ...]) -> JsonValue:
    """The first of ``keys`` the row sets, an empty string included: ``""`` is an answer (an empty
    reference scores differently from none at all), only a missing key or null is 'no value'."""
    for key in keys:
        if row.get(key) is not None:
            return row[key]
    return None


#: Unicode's categories Cc (C0, DEL, C1), Zl and Zp, each of which is these characters exactly
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _control(text: str) -> str | None:
    """The first control character or line break in ``text`` (C0, DEL, C1, U+2028/U+2029)."""
    found = _CONTROL.search(text)
    return None if found is None else found.group()


def _id(default_id: str, *candidates: JsonValue) -> str:
    """The first id given; 0 is an id (only null and "" are not). A NUL is refused: C code, SQLite
    tools and file names cut an id at it, so two ids could become one. Any other control character
    or line break is refused too: an id is printed on one line, and a line break in it would let a
    dataset start a line of a CI log (a GitHub workflow command) or forge a line of a report."""
    for value in candidates:
        if value is not None and value != "":
            text = str(value)
            if "\0" in text:
                raise RowError(f"the sample id {text!r} contains a NUL character (\\x00)")
            bad = _control(text)
            if bad is not None:
                raise RowError(f"the sample id {text!r} contains a control character ({bad!r}); "
                               "a sample id is one line of printable text")
            return text
    return default_id


def _turns(value: JsonValue) -> list[Turn]:
    """A prompt given as text, or as a list of chat messages."""
    if value is None:
        return []
    if isinstance(value, list):
        try:
            return [Turn.model_validate(m) for m in value]
        except ValidationError as exc:
            raise RowError(f"messages: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}") from None
    return [Turn(role="user", content=_text(value) or "")]


def _adaptive(row: JsonObject, default_id: str) -> Sample:
    messages = row.get("messages")
    if not isinstance(messages, list):
        raise RowError("'messages' must be a list of {role, content} objects")
    turns = _turns(messages)
    completion = row.get("completion")
    if isinstance(completion, dict):  # {"role": "assistant", "content": ...}
        completion = completion.get("content")
    if completion is None and turns and turns[-1].role == "assistant":
        completion = turns.pop().content
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise RowError("'metadata' must be an object")
    expected = row.get("expected", metadata.get("expected"))
    return Sample(
        id=_id(default_id, row.get("id"), metadata.get("id")),
        messages=turns,
        completion=_text(completion),
        expected=_text(expected),
        metadata=metadata,
        fields={k: v for k, v in row.items() if k not in ("messages", "completion")},
    )


def _openai(row: JsonObject, default_id: str) -> Sample:
    item = row.get("item")
    if not isinstance(item, dict):
        raise RowError("an OpenAI row needs an 'item' object")
    sample = row.get("sample") or {}
    if not isinstance(sample, dict):
        raise RowError("'sample' must be an object")
    completion = sample.get("output_text")
    if completion is None and isinstance(sample.get("choices"), list) and sample["choices"]:
        first = sample["choices"][0]
        message = first.get("message") if isinstance(first, dict) else first
        if message is not None and not isinstance(message, dict):
            raise RowError("'sample.choices' must be a list of {message: {content}} objects")
        completion = (message or {}).get("content")
    return Sample(
        id=_id(default_id, row.get("id"), item.get("id")),
        messages=_turns(_first(item, ("messages",)) or _first(item, INPUT_KEYS)),
        completion=_text(completion),
        # OpenAI graders write the answer as {{ item.reference }}: that field first
        expected=_text(_value(item, ("reference",) + EXPECTED_KEYS)),
        metadata={k: v for k, v in item.items() if k not in INPUT_KEYS},
        fields=row,
    )


def _generic(row: JsonObject, default_id: str, expected_keys: tuple[str, ...]) -> Sample:
    given = row.get("metadata")
    metadata = given if isinstance(given, dict) else {}
    extra = {k: v for k, v in row.items() if k not in INPUT_KEYS + OUTPUT_KEYS + ("id", "sample_id", "metadata")}
    return Sample(
        id=_id(default_id, row.get("id"), row.get("sample_id")),
        messages=_turns(_first(row, INPUT_KEYS)),
        completion=_text(_value(row, OUTPUT_KEYS)),
        expected=_text(_value(row, expected_keys)),
        metadata={**extra, **metadata},
        fields=row,
    )


def _letta(row: JsonObject, default_id: str) -> Sample:
    sample = _generic(row, default_id, ("ground_truth",) + EXPECTED_KEYS)
    if "rubric_vars" in row and not isinstance(row["rubric_vars"], dict):
        raise RowError("'rubric_vars' must be an object")
    return sample


def _mka1(row: JsonObject, default_id: str) -> Sample:
    return _generic(row, default_id, ("target",) + EXPECTED_KEYS)


def _flat(row: JsonObject, default_id: str) -> Sample:
    if _first(row, INPUT_KEYS) is None and _value(row, OUTPUT_KEYS) is None:
        raise RowError(
            f"no input or output column: expected one of {', '.join(INPUT_KEYS + OUTPUT_KEYS)}"
        )
    return _generic(row, default_id, EXPECTED_KEYS)


CONVERTERS: dict[str, Callable[[JsonObject, str], Sample]] = {
    "adaptive": _adaptive,
    "openai": _openai,
    "letta": _letta,
    "mka1": _mka1,
    "flat": _flat,
}


def row_to_sample(row: JsonValue, fmt: str, default_id: str) -> Sample:
    if not isinstance(row, dict):
        raise RowError(f"a row must be a JSON object, got {type(row).__name__}")
    try:
        return CONVERTERS[fmt](row, default_id)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RowError(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _plain_adaptive(row: JsonObject, default_id: str) -> SampleRow | None:
    """``_adaptive`` for a row with nothing to check but types: every message {role, content} of
    strings, a text completion and expected, an object metadata. None for anything else, which
    then takes the full path (pydantic, and the same error sentences). The stored JSON is the text
    ``Sample.model_dump_json(exclude_defaults=True)`` writes, byte for byte (orjson writes strings and
    numbers as pydantic does, NaN and infinities as null), without making the Sample: the row's own
    objects (metadata, the other fields) are written by orjson's C code, not walked in Python."""
    messages = row.get("messages")
    if type(messages) is not list:
        return None
    turns: list[dict[str, str]] = []  # Turn's fields in its own order, defaults left out
    input_text = None
    for m in messages:
        if type(m) is not dict:
            return None
        role, content = m.get("role"), m.get("content", "")
        # keys {role} or {role, content} (a role is a string, so it is there), both strings
        if type(role) is not str or type(content) is not str or len(m) != 1 + ("content" in m):
            return None
        turns.append({"role": role, "content": content} if content else {"role": role})  # "" is Turn's default
        if role == "user":
            input_text = content
    completion = row.get("completion")
    if completion is None and turns and messages[-1]["role"] == "assistant":
        turns.pop()  # an assistant's: the last user's content stays the input
        completion = messages[-1].get("content", "")
    metadata = row.get("metadata") or {}
    if type(metadata) is not dict:
        return None
    expected = row.get("expected", metadata.get("expected"))
    if (completion is not None and type(completion) is not str) or (expected is not None and type(expected) is not str):
        return None
    given_id = row.get("id")
    # a printable id has no control character (each is unprintable); any other takes _id's checks
    sample_id = given_id if type(given_id) is str and given_id and given_id.isprintable() \
        else _id(default_id, given_id, metadata.get("id"))
    stored: JsonObject = {"id": sample_id}
    if turns:
        stored["messages"] = turns
    if completion is not None:
        stored["completion"] = completion
    if expected is not None:
        stored["expected"] = expected
    if metadata:
        stored["metadata"] = metadata
    fields = row.copy()  # the row less messages and completion, in its order
    del fields["messages"]
    fields.pop("completion", None)
    if fields:
        stored["fields"] = fields
    try:
        data = _dumps(stored).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: pydantic writes it
        return None
    if input_text is None:  # no user turn: the last turn's (``turns`` is a prefix of ``messages``)
        input_text = messages[len(turns) - 1].get("content", "") if turns else ""
    return _new_tuple(SampleRow, (sample_id, input_text, completion, expected, data))


_dumps = orjson.dumps
#: ``SampleRow(...)`` without the Python frame of a NamedTuple's ``__new__``
_new_tuple = tuple.__new__


_PLAIN: dict[str, Callable[[JsonObject, str], SampleRow | None]] = {"adaptive": _plain_adaptive}


def row_to_stored(row: JsonValue, fmt: str, default_id: str) -> SampleRow:
    """``row_to_sample`` in the library's stored form: a plain row is checked by type alone and
    written as is (an import's hot path); any other goes through ``row_to_sample`` (and raises the
    same ``RowError``)."""
    plain = _PLAIN.get(fmt)
    if plain is not None and type(row) is dict:
        stored = plain(row, default_id)
        if stored is not None:
            return stored
    return SampleRow.of(row_to_sample(row, fmt, default_id))
