"""Inspect AI's text rules, for the built-in options its scorers import as (checked sample by sample
against inspect-ai's own scorers in tests/conformance/test_inspect.py).

- ``match()``: both sides stripped, optionally casefolded, then whitespace and ASCII punctuation cut
  from both ends (``trim_punctuation``); with ``numeric`` a reference that reads as a number is
  compared with the number(s) of the submission at the location, after Inspect's number reading
  (signs of any script, fullwidth and other digits, grouping separators, vulgar fractions,
  superscript exponents, Chinese numerals; NaN and infinities are not numbers), both written with
  five significant digits.
- ``exact()`` and ``f1()``: SQuAD-style tokens (split on spaces and hyphens; casefold; punctuation
  removed unless the token is a number; numbers written as floats; articles dropped), optional stop
  words; f1 is rounded to two decimals and a reference without tokens scores 0.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable

# -- match(): punctuation trimming and numbers ---------------------------------------------------

_EDGE = string.whitespace + string.punctuation
_NUMBER_EDGE = "!?:;()[]{}'\"`"  # sentence/enclosing marks; operators such as < or ~ stay
_ESCAPED = re.compile(r"\\([$,£€*_])")
_MONEY = re.compile(r"[$,£€*_]")
_SENTENCE_DOT = re.compile(r"\.(?=\s|$|\D)")
_SPACES = re.compile(r"\s+")

_MINUS = frozenset("-\u2212\ufe63\uff0d\u8d1f\u8ca0")  # ASCII, minus sign, small, fullwidth; 负 負
_PLUS = frozenset("+\uff0b\ufe62\u6b63")  # ASCII, fullwidth, small; 正
_PLUS_ONLY = frozenset("+\uff0b\ufe62")
_MINUS_ONLY = frozenset("-\u2212\ufe63\uff0d")
_DECIMAL_EXTRA = frozenset("\u066b\uff0e")  # Arabic decimal separator, fullwidth full stop
_GROUPING = frozenset(",\uff0c\ufe50\u3001\u066c \u00a0\u202f\u2009\u2007\u2008'\u2019\u02bc\uff07")
_SUPERSCRIPT = {c: str(n) for n, c in enumerate("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")}
_SUPERSCRIPT_SIGN = {"\u207b": "-", "\u207a": "+"}
_CJK_DIGIT = {
    "零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9, "壹": 1, "贰": 2, "貳": 2, "叁": 3, "參": 3, "肆": 4, "伍": 5, "陆": 6, "陸": 6, "柒": 7,
    "捌": 8, "玖": 9, "两": 2, "兩": 2, "幺": 1,
}
_CJK_TENS = {"廿": 20, "卅": 30, "卌": 40}
_CJK_SMALL = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CJK_LARGE = {"万": 10_000, "萬": 10_000, "亿": 10**8, "億": 10**8, "兆": 10**12}
_CJK_POINT = frozenset("点點")
_CJK_ZERO = frozenset("零〇○")
_CJK_ANY = frozenset(_CJK_DIGIT) | frozenset(_CJK_TENS) | frozenset(_CJK_SMALL) | frozenset(_CJK_LARGE) \
    | _CJK_POINT | frozenset("负負正")


def trim_punctuation(text: str) -> str:
    """Whitespace and ASCII punctuation cut from both ends (Inspect's ``strip_punctuation``)."""
    return text.strip(_EDGE)


def strip_number_marks(text: str) -> str:
    """Currency signs, commas, ``*``/``_`` (LaTeX-escaped too) and dots not followed by a digit removed."""
    text = _ESCAPED.sub(r"\1", text)
    return _SENTENCE_DOT.sub("", _MONEY.sub("", text))


def _digit(ch: str) -> str | None:
    if "0" <= ch <= "9":
        return ch
    for read in (unicodedata.decimal, unicodedata.digit):
        try:
            return str(read(ch))
        except (TypeError, ValueError):
            pass
    value = _CJK_DIGIT.get(ch)
    return None if value is None else str(value)


def _one_symbol(text: str) -> float | None:
    if len(text) != 1:
        return None
    try:
        return float(unicodedata.numeric(text))
    except (TypeError, ValueError):
        return None


def _fraction(ch: str) -> float | None:
    try:
        value = unicodedata.numeric(ch)
    except (TypeError, ValueError):
        return None
    return float(value) if 0.0 < value < 1.0 else None


def _exponent(text: str) -> tuple[str, int | None]:
    """A trailing superscript exponent split off (``3²``); none when the base would be empty."""
    end = len(text) - 1
    while end >= 0 and (text[end].isspace() or text[end] in _GROUPING):
        end -= 1
    if end < 0:
        return text.strip(), None
    start = end
    while start >= 0 and text[start] in _SUPERSCRIPT:
        start -= 1
    if start == end:
        return text.strip(), None
    first = start + 1
    if start >= 0 and text[start] in _SUPERSCRIPT_SIGN:
        first = start
    base = text[:first].rstrip()
    if not base:
        return text.strip(), None
    digits = "".join(_SUPERSCRIPT.get(c) or _SUPERSCRIPT_SIGN[c] for c in text[first:end + 1])
    try:
        return base, int(digits)
    except ValueError:
        raise ValueError(f"invalid exponent in {text!r}") from None


def _cjk_integer(text: str) -> int | None:
    total = section = number = 0
    for ch in text:
        if ch.isspace() or ch in _CJK_ZERO:
            continue
        if ch in _CJK_TENS:
            section += _CJK_TENS[ch]
        elif ch in _CJK_DIGIT:
            number = _CJK_DIGIT[ch]
        elif (d := _digit(ch)) is not None:
            number = int(d)
        elif ch in _CJK_SMALL:
            section += (number or 1) * _CJK_SMALL[ch]
            number = 0
        elif ch in _CJK_LARGE:
            total += (section + number) * _CJK_LARGE[ch]
            section = number = 0
        else:
            return None
    return total + section + number


def _cjk(text: str) -> float | None:
    whole, fraction = text, ""
    for point in ("点", "點", "．", "."):
        if point in text:
            whole, _, fraction = text.partition(point)
            break
    if any(ch in _CJK_SMALL or ch in _CJK_LARGE or ch in _CJK_TENS for ch in whole):
        value = _cjk_integer(whole)
        if value is None:
            return None
    else:
        digits = []
        for ch in whole:
            if ch.isspace():
                continue
            d = _digit(ch)
            if d is None:
                return None
            digits.append(d)
        value = int("".join(digits)) if digits else 0
    tail, scale = 0.0, 0.1
    for ch in fraction:
        if ch.isspace():
            continue
        d = _digit(ch)
        if d is None:
            return None
        tail += int(d) * scale
        scale /= 10.0
    return float(value) + tail


def _digits(text: str) -> float | None:
    """Digits of any script with grouping separators, one decimal mark and an ASCII exponent."""
    text = text.strip()
    if not text:
        return None
    dots = [i for i, c in enumerate(text) if c == "."]
    commas = [i for i, c in enumerate(text) if c == ","]
    mark: str | None = None
    if dots and commas:
        mark = "." if dots[-1] > commas[-1] else ","
    elif dots:
        mark = "."
    elif commas and 1 <= sum(1 for c in text[commas[-1] + 1:] if _digit(c) is not None) <= 3:
        mark = ","
    out: list[str] = []
    decimal = exponent = False
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch in "eE" and not exponent:
            if not out:
                return None
            out.append(ch)
            exponent = True
            if i < len(text) and (text[i] in _PLUS_ONLY or text[i] in _MINUS_ONLY):
                out.append("+" if text[i] in _PLUS_ONLY else "-")
                i += 1
        elif ch in _DECIMAL_EXTRA or (mark is not None and ch == mark):
            if decimal:
                return None
            out.append(".")
            decimal = True
        elif ch in _GROUPING or ch.isspace() or (mark is not None and ch in ",."):
            continue
        elif (d := _digit(ch)) is not None:
            out.append(d)
        else:
            return None  # CJK numerals are read by _cjk; anything else is not a number
    if not out or all(c in ".eE+-" for c in out):
        return None
    try:
        return float("".join(out))
    except ValueError:
        return None


def _core(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    if any(ch in _CJK_ANY for ch in text):
        value = _cjk(text)
        if value is not None:
            return value
    value = _digits(text)
    if value is not None:
        return value
    return _one_symbol(text)


def _base(text: str) -> float | None:
    if not text:
        return None
    hits = [(i, v) for i, ch in enumerate(text) if (v := _fraction(ch)) is not None]
    if not hits:
        return _core(text)
    if len(hits) > 1:
        raise ValueError(f"several fractions in {text!r}")
    at, part = hits[0]
    head, tail = text[:at].strip(), text[at + 1:].strip()
    if any(not (c.isspace() or c in _GROUPING) for c in tail):
        raise ValueError(f"text after a fraction in {text!r}")
    if not head:
        return part
    whole = _core(head)
    if whole is None:
        raise ValueError(f"no number before the fraction in {text!r}")
    return whole + part


def read_unicode_number(text: str) -> float:
    """Inspect's reading of a number written in any script; ValueError when it is not one."""
    rest = text.strip()
    if not rest:
        raise ValueError("empty")
    negative = False
    rest = rest.lstrip()
    while rest and (rest[0] in _MINUS or rest[0] in _PLUS):
        negative ^= rest[0] in _MINUS
        rest = rest[1:].lstrip()
    single = _one_symbol(rest)
    if single is not None:
        return -single if negative else single
    base_text, power = _exponent(rest)
    base = _base(base_text)
    if base is None:
        raise ValueError(f"not a number: {text!r}")
    base = -base if negative else base
    if power is None:
        return float(base)
    try:
        return float(base**power)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ValueError(str(exc)) from None


def parse_number(text: str, trim: bool = True) -> float | None:
    """A finite number (float syntax first, then any script), or None; sentence marks around it are
    trimmed unless ``trim`` is off (match's exact location)."""
    text = text.strip(_NUMBER_EDGE) if trim else text
    readers: tuple[Callable[[str], float], ...] = (float, read_unicode_number)
    for read in readers:
        try:
            value = read(text)
        except (ValueError, OverflowError):
            continue
        if math.isfinite(value):
            return value
    return None


def number_text(text: str, trim: bool = True) -> str:
    """The number written with five significant digits (the text itself when it is not a number)."""
    value = parse_number(text, trim)
    return text if value is None else format(value, ".5g")


def numeric_location(submission: str, reference: str, location: str) -> bool | None:
    """match(numeric=True) once both sides are stripped (and casefolded): None when the reference,
    without its number marks, is not a number (the caller compares text); else whether the
    submission's number at ``location`` (begin: first, end: last, any, exact: whole) equals it."""
    ref = strip_number_marks(reference)
    if parse_number(ref) is None:
        return None
    want = number_text(ref)
    text = strip_number_marks(submission)
    words = _SPACES.split(text)
    if location == "exact":
        return number_text(text, trim=False) == want
    found = [number_text(w) for w in words if parse_number(w) is not None]
    if location == "any":
        return want in found
    if location == "end":
        found.reverse()
    return bool(found) and found[0] == want


# -- exact() and f1(): SQuAD-style tokens --------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_TOKEN_SPLIT = re.compile(" |-")


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _token(token: str) -> str:
    token = token.casefold()
    if not _finite(token):
        trimmed = trim_punctuation(token)
        token = trimmed if _finite(trimmed) else "".join(c for c in token if c not in string.punctuation)
    if _finite(token):
        token = str(float(token))
    return " ".join(_ARTICLES.sub(" ", token).split())


def squad_normalize(text: str, stop_words: list[str] | tuple[str, ...] = ()) -> str:
    """Inspect's answer normalisation for exact() and f1() (tokens joined by single spaces)."""
    stops = [_token(w) for w in stop_words]
    tokens = [t for t in (_token(raw) for raw in _TOKEN_SPLIT.split(text)) if t not in stops]
    return " ".join(t for t in tokens if t.strip()).strip()


def squad_exact(answer: str, reference: str, stop_words: list[str] | tuple[str, ...] = ()) -> float:
    """1.0 when both normalise alike; a reference with no token never matches."""
    want = squad_normalize(reference, stop_words)
    return float(bool(want) and want == squad_normalize(answer, stop_words))


def squad_f1(answer: str, reference: str, stop_words: list[str] | tuple[str, ...] = ()) -> float:
    """Bag-of-tokens F1 rounded to two decimals; 0.0 when the reference has no token."""
    gold = Counter(squad_normalize(reference, stop_words).split())
    if not gold:
        return 0.0
    pred = Counter(squad_normalize(answer, stop_words).split())
    common = sum((pred & gold).values())
    precision = common / sum(pred.values()) if pred else 1.0
    recall = common / sum(gold.values())
    f1 = 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)
    return round(f1, 2)
