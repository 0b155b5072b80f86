"""Packing a run's rows compactly for the HTML viewer: a string table and columnar arrays.

Why: a 100,000-sample run written as one JSON object a sample repeats every key name and every
status, verdict, grader name, judge instructions and metadata value 100,000 times. Columns of small
integers indexing one table of distinct strings keep the file a fraction of that size and let the page
read a column (a filter, a sort) without touching the others. Texts longer than the cut are shortened
here, once, and counted, so the page can say how its file was cut.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject, JsonValue
from studio.core.outside import printable_json

#: the shortest cut a text may be given (a shorter one would leave no sentence readable)
MIN_CUT = 20
#: a string column's value for "none" (no label, no error, no metadata field)
MISSING = -1


class CutError(StudioError, ValueError):
    """A cut the viewer cannot make (a negative or tiny text length)."""


class Cut(BaseModel):
    """What an exported page leaves out; the page states it in its header."""

    model_config = ConfigDict(frozen=True)

    #: keep the judges' exact prompts and raw answers (``--no-prompts`` leaves them out)
    prompts: bool = True
    #: texts longer than this many characters are cut to it (None: every text whole)
    text_chars: int | None = None

    def checked(self) -> Cut:
        if self.text_chars is not None and self.text_chars < MIN_CUT:
            raise CutError(f"--cut-text must be {MIN_CUT} characters or more, not {self.text_chars}")
        return self


class Packer:
    """One string table shared by every column of a page; ``cut`` shortens long texts as they enter."""

    def __init__(self, cut: Cut) -> None:
        self.cut = cut.checked()
        self.strings: list[str] = []
        self._index: dict[str, int] = {}
        #: how many texts were cut, and how many characters they lost
        self.texts_cut = 0
        self.chars_cut = 0

    def name(self, value: str | None) -> int:
        """A short value (status, verdict, grader, metadata value): interned whole, never cut."""
        if value is None:
            return MISSING
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self.strings)
            self.strings.append(value)
        return found

    def text(self, value: JsonValue) -> int:
        """A long value (input, output, rationale, prompt): cut to ``cut.text_chars`` when longer."""
        if value is None:
            return MISSING
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        limit = self.cut.text_chars
        if limit is not None and len(text) > limit:
            lost = len(text) - limit
            self.texts_cut += 1
            self.chars_cut += lost
            text = f"{text[:limit]}… [cut: {lost:,} more characters]"
        return self.name(text)

    def cut_note(self) -> JsonObject:
        """How the file was cut, as the page states it."""
        return {"prompts": self.cut.prompts, "text_chars": self.cut.text_chars,
                "texts_cut": self.texts_cut, "chars_cut": self.chars_cut}


def script_json(value: JsonValue) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` (so no
    ``</script>`` or ``<!--`` can close or bend the element), no U+2028/U+2029, no raw control
    character or lone surrogate (``printable_json``); ``JSON.parse`` reads the same values back."""
    text = printable_json(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str,
                                     allow_nan=False))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
