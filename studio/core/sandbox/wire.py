"""What the studio accepts from a worker: every line checked before anything of it is used.

The worker runs a stranger's code, and that code can reach the result channel (through ``gc`` it finds
the loop's objects), so a line may be anything: 200,000 nested lists, a too-short entry, an index that
belongs to no sample, a result far over the size limit. ``parse_line`` turns a line into a checked
message or raises ``ProtocolError`` with a sentence; the limits (result size, printed text, nesting)
are the host's, whatever the guest was told or rewrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from studio.core.json_types import JsonArray, JsonObject, JsonValue

from .results import LIMIT, MEMORY, NOT_LOADED, OK, RAISED, TOO_LARGE, UNSERIALISABLE

#: deepest nesting of a result value a grader may return (a score dict with details is 3-4 deep)
MAX_DEPTH = 64
#: printed text kept per sample (the guest keeps the same; a rewritten guest gets truncated here)
PRINTED_CHARS = 4096
#: error text and exception names kept per sample
ERROR_CHARS = 2000
#: bytes of one message beyond its entries (ids, keys, a model call's small fields)
MESSAGE_SLACK = 64 * 1024
#: hard ceiling of one line, whatever the batch (a whole-batch result of a huge dataset)
MAX_LINE_BYTES = 64 * 1024 * 1024

_STATUSES = frozenset({OK, RAISED, UNSERIALISABLE, MEMORY, TOO_LARGE, LIMIT, NOT_LOADED})
_SCALARS = frozenset({float, int, bool, type(None)})


class ProtocolError(ValueError):
    """A worker line the studio refuses; the message says why, for the sample's error."""


@dataclass(frozen=True)
class Limits:
    """The host's caps for one batch."""

    output_bytes: int  # largest result value of one sample, as JSON
    count: int  # entries the batch may report (indices 0..count-1)

    def line_bytes(self, whole: bool = False) -> int:
        """Largest line this batch can honestly produce: every entry at its caps (printed text may
        be JSON-escaped to 6 bytes a character), plus the message's own fields."""
        per_entry = self.output_bytes + 6 * PRINTED_CHARS + 6 * ERROR_CHARS + 256
        return min(MAX_LINE_BYTES, max(1, self.count) * per_entry + MESSAGE_SLACK)


def loads(line: bytes) -> JsonValue:
    """JSON of a worker line; nesting too deep for the parser or broken text is a ProtocolError."""
    try:
        return json.loads(line)
    except RecursionError:
        raise ProtocolError("the worker sent a message nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError("the grader wrote garbage into the sandbox channel") from None


def check_depth(value: JsonValue, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests at most ``limit`` containers deep (iterative: no recursion)."""
    stack: list[tuple[JsonValue, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: JsonValue = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def _text(value: JsonValue, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else str(type(value).__name__)


def check_entry(entry: JsonValue, limits: Limits, seen: set[int]) -> JsonArray:
    """One result entry [index, status, value, extra...] made safe, or ProtocolError.

    A value over the result-size limit becomes a TOO_LARGE entry naming the size; printed text is
    truncated to the host's cap; strings the studio shows are cut to ``ERROR_CHARS``.
    """
    if not isinstance(entry, list) or not 3 <= len(entry) <= 6:
        raise ProtocolError("the worker sent a malformed result entry")
    index, status = entry[0], entry[1]
    if type(index) is not int or not 0 <= index < limits.count:
        raise ProtocolError("the worker sent a result for a sample that is not in the batch")
    if index in seen:
        raise ProtocolError("the worker sent two results for one sample")
    if type(status) is not int or status not in _STATUSES:
        raise ProtocolError("the worker sent a result with an unknown status")
    rest = list(entry[3:])
    printed: dict[str, str] | None = None
    if rest and isinstance(rest[-1], dict):
        last = rest.pop()
        if set(last) != {"printed"} or not isinstance(last["printed"], str):
            raise ProtocolError("the worker sent a malformed printed-output field")
        printed = {"printed": last["printed"][:PRINTED_CHARS]}
    value = entry[2]
    if status == OK:
        if type(value) not in _SCALARS:
            if not check_depth(value):
                raise ProtocolError(f"the grader returned a value nested deeper than {MAX_DEPTH} levels")
            try:
                size = len(json.dumps(value, allow_nan=True))
            except (TypeError, ValueError, RecursionError):
                raise ProtocolError("the worker sent a result that is not plain data") from None
            if size > limits.output_bytes:
                value, status, rest = _preview(value), TOO_LARGE, [size]
        if status == OK and rest:
            raise ProtocolError("the worker sent a malformed result entry")
    elif status == TOO_LARGE:
        size = rest[0] if rest and type(rest[0]) is int else 0
        value, rest = _text(value, 1024), [size]
    else:
        value = _text(value, ERROR_CHARS)
        rest = [_extra(x) for x in rest[:2]]
    out: JsonArray = [index, status, value, *rest]
    if printed is not None:
        out.append(printed)
    seen.add(index)
    return out


def check_entries(entries: JsonArray, limits: Limits, seen: set[int]) -> list[JsonArray]:
    """``check_entry`` over a message's entries. The common entry, [index, OK, number or None]
    with nothing printed, is checked inline (the same checks: a list of three, an int index of
    this batch not seen before, the OK status, a scalar value): a run's hot path."""
    count = limits.count
    checked: list[JsonArray] = []
    for entry in entries:
        if type(entry) is list and len(entry) == 3:
            index, status, value = entry
            if (type(status) is int and status == OK and type(value) in _SCALARS and type(index) is int
                    and 0 <= index < count and index not in seen):
                seen.add(index)
                checked.append(entry)
                continue
        checked.append(check_entry(entry, limits, seen))
    return checked


def check_floats(floats: JsonValue, at: JsonValue, limits: Limits, seen: set[int], results: dict[int, JsonValue]) -> int:
    """A message's float array: ``floats[k]`` is the score of the batch's sample ``at + k``, a
    plain finite float (None: no result there, that sample's entry is elsewhere). Each becomes
    ``results[at + k] = score``, a bare float (an entry [index, OK, score] in short); returns how
    many. The same checks as an entry's: an int start, inside the batch, every index new, and each
    value a float (a non-finite one becomes an ordinary OK entry, for the platforms' rules to
    judge); anything else is a ProtocolError."""
    if type(floats) is not list or type(at) is not int or not 0 <= at <= limits.count - len(floats):
        raise ProtocolError("the worker sent a malformed score array")
    indices = range(at, at + len(floats))
    if set(map(type, floats)) == {float} and seen.isdisjoint(indices):
        total = sum(floats)  # finite only when every score is (an inf or a nan makes it inf or nan)
        if total - total == 0.0:  # the usual message, checked whole in C: no step a sample
            seen.update(indices)
            results.update(zip(indices, floats, strict=True))
            return len(floats)
    count = 0
    for index, value in enumerate(floats, at):
        if value is None:
            continue
        if type(value) is not float:
            raise ProtocolError("the worker sent a score array holding something else than numbers")
        if index in seen:
            raise ProtocolError("the worker sent two results for one sample")
        seen.add(index)
        results[index] = value if value - value == 0.0 else [index, OK, value]
        count += 1
    return count


def _extra(value: JsonValue) -> JsonValue:
    """Exception name or grader line after an error text: short text, an int, or nothing."""
    if value is None or type(value) is int:
        return value
    return _text(value, 200)


def _preview(value: JsonValue) -> str:
    try:
        return json.dumps(value, allow_nan=True)[:1024]
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def check_message(message: JsonValue, rid: int) -> JsonObject:
    """The envelope: a dict answering the batch ``rid``."""
    if not isinstance(message, dict):
        raise ProtocolError("the grader wrote into the sandbox channel")
    if message.get("id") != rid or type(message.get("id")) is not int:
        raise ProtocolError("the worker answered a request that is not the current batch")
    return message


def number(value: JsonValue, default: float = 0.0) -> float:
    """A float field of a message (cpu seconds, stray count) or ``default`` when it is not one."""
    if type(value) in (int, float) and value == value and abs(value) < 1e12:
        return float(value)
    return default
