"""The one boundary every outside value passes: text and JSON made storable, text made printable.

Outside values are a judge's answer, a model's generated output, a function grader's rationale and
details, a row copied from another library. They can hold what neither backend stores alike:

- NUL: SQLite's TEXT holds it, PostgreSQL's text cannot, and ``\\u0000`` inside JSON breaks
  PostgreSQL's ``jsonb`` (which its ``json_extract`` reads through);
- a lone surrogate (U+D800-U+DFFF without its pair, which JSON's ``\\u`` escapes allow): no UTF-8
  encoder writes it, so one such answer failed a whole batch of writes on either backend;
- JSON nested thousands deep (Python's decoder and every recursive reader stop with a
  RecursionError, a bug report) or a float that is not finite (``NaN`` is not JSON: ``jsonb``
  refuses it).

What each becomes is decided here, once, and identically on SQLite and PostgreSQL:

- NUL and a lone surrogate become U+FFFD (the replacement character; a split surrogate *pair* is
  joined back into its character first);
- JSON deeper than ``MAX_DEPTH`` keeps its first ``MAX_DEPTH`` levels, the rest replaced by a
  string saying so; a non-finite float becomes its name as a string ("NaN", "Infinity");
- every other character (ESC, other C0 and C1 controls) is kept as it came: it is data, and it
  is stored. It is made visible only where it would act: at a terminal (``printable``).

``storable_text`` and ``storable_json`` cost one regular-expression search (in C) when there is
nothing to change, and nothing at all for a score: only text is checked.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:  # the stdlib-only boundary the CLI's lean start-up shows text through: no typing import
    from studio.core.json_types import JsonValue

__all__ = ["MAX_DEPTH", "UNKNOWN_TIME", "decode_outside", "iso_time", "json_text", "loads_outside", "printable",
           "printable_json", "shown_time", "storable_json", "storable_text"]

#: how a stored time the library could not read (``Timestamp`` reads it as None) is shown
UNKNOWN_TIME = "unknown time"


def shown_time(moment: datetime | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A stored time as a listing or the window shows it: every row's time is an outside value
    (a teammate's hand edit, another studio's write) that may read as None, shown "unknown time"
    instead of failing the whole listing."""
    return UNKNOWN_TIME if moment is None else moment.strftime(fmt)


def iso_time(moment: datetime | None) -> str | None:
    """A stored time in JSON output: ISO 8601, or null when the library could not read it."""
    return None if moment is None else moment.isoformat()


#: levels of JSON kept from an outside value (a judge's answer is two or three deep)
MAX_DEPTH = 64
REPLACEMENT = "\ufffd"

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: in encoded JSON text: a raw NUL or surrogate, or the escape of a NUL (jsonb refuses it)
_UNSTORABLE_JSON = re.compile(r"[\x00\ud800-\udfff]|\\u0000")
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str)


def storable_text(text: str) -> str:
    """``text`` as both backends store it alike: NUL and lone surrogates replaced by U+FFFD."""
    if _UNSTORABLE.search(text) is None:
        return text
    if _SURROGATE.search(text) is not None:
        # a pair split into two code points (a surrogatepass decode, two \\u escapes) is one character
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", REPLACEMENT)


def storable_json(value: object, depth: int = MAX_DEPTH, *, name_floats: bool = True) -> JsonValue:
    """``value`` (decoded JSON, or what a grader returned) with every string and key made
    storable, nesting past ``depth`` levels cut, and non-finite floats named. Never recurses
    deeper than ``depth`` (a value ten thousand deep is cut, not a RecursionError)."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float):
        if math.isfinite(value) or not name_floats:
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (dict, list, tuple)):
        if depth <= 0:
            return f"(nested deeper than {MAX_DEPTH} levels: cut)"
        if isinstance(value, dict):
            return {storable_text(str(k)): storable_json(v, depth - 1, name_floats=name_floats)
                    for k, v in value.items()}
        return [storable_json(v, depth - 1, name_floats=name_floats) for v in value]
    if value is None or isinstance(value, (bool, int)):
        return value
    return storable_text(str(value))


def json_text(value: object) -> str:
    """``value`` as JSON text either backend stores and reads alike (``storable_json``'s rules).
    The usual value encodes and passes one search as it is; only a hostile one is walked."""
    try:
        text = _ENCODER.encode(value)
    except (ValueError, RecursionError, TypeError):  # NaN, nested too deep, a key that is no string
        return _ENCODER.encode(storable_json(value))
    if _UNSTORABLE_JSON.search(text) is None:
        return text
    return _ENCODER.encode(storable_json(value))


def parse_outside(text: str | bytes) -> JsonValue:
    """JSON text from outside decoded as it is (a NaN stays a float: a judge's score of NaN is
    refused for what it is, as the platforms' runtimes refuse it); a ValueError, never a
    RecursionError, when it is not JSON or is nested too deep to decode. Storing it goes
    through ``storable_json``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested deeper than this studio decodes") from None


def loads_outside(text: str | bytes) -> JsonValue:
    """JSON text from outside decoded and made storable; a ValueError (never a RecursionError)
    when it is not JSON or is nested too deep to decode."""
    return decode_outside(text)[0]


def decode_outside(text: str | bytes) -> tuple[JsonValue, str]:

    """(value, text) of JSON text from outside: the value made storable (``storable_json``), and
    the text it is stored as (``text`` itself when nothing changed, else the value re-encoded).
    A ValueError (never a RecursionError) when it is not JSON or is nested too deep to decode."""
    value = parse_outside(text)
    stored = storable_json(value)
    try:
        same = stored == value
    except RecursionError:
        same = False
    if same and isinstance(text, str):
        return value, text
    # the value keeps a non-finite number as a float, so what reads it (a score, a token count)
    # refuses it for what it is; the stored text names it
    return storable_json(value, name_floats=False), json_text(stored)


# --- terminals ------------------------------------------------------------------------------------

#: C0 controls but TAB and LF, DEL, and C1 controls (0x9b is CSI to many terminals)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_BUT_CR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures: ␀ ... ␍ ... ␛ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\u241b" + chr(code - 0x40)  # C1 as the ESC sequence it stands for: 0x9b -> ␛[


def printable(text: str, *, carriage_returns: bool = False) -> str:
    """``text`` safe to write to a terminal: every control character but TAB and line feed (and
    carriage return with ``carriage_returns``) shown as a visible symbol: ESC as ␛, so an escape
    sequence is read, never obeyed. Stored text keeps its characters: this is for showing it."""
    control = _CONTROL_BUT_CR if carriage_returns else _CONTROL
    if control.search(text) is None:
        return text
    return control.sub(_visible, text)


#: in encoded JSON text (where a raw control can only stand inside a string): what json's encoder
#: leaves raw with ``ensure_ascii=False`` and a terminal or an encoder could not take
_RAW_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff]")


def printable_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) for a terminal or a pipe: DEL, C1 controls and lone
    surrogates written as ``\\u`` escapes, so the JSON keeps its values exactly and holds no raw
    control character (C0 ones json escapes itself)."""
    if _RAW_IN_JSON.search(text) is None:
        return text
    return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
