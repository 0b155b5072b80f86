"""The HTML viewer's packing (engine/reports/viewer/pack.py): JSON safe inside a script element that
reads back exactly, one string table, and a cut that is made once and counted."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.core.engine.reports.viewer.pack import MISSING, Cut, CutError, Packer, script_json

NASTY = ["</script><script>alert(1)</script>", "<!-- <script>", "a & b > c", "\u2028\u2029", "\x85\x9f\x7f",
         "\ud800 lone", "]]>", "javascript:alert(2)"]


@given(st.lists(st.one_of(st.text(), st.sampled_from(NASTY))))
def test_script_json_reads_back_and_cannot_close_its_element(values: list[str]) -> None:
    text = script_json({"strings": values})
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in text
    assert json.loads(text) == {"strings": values}


def test_one_table_for_every_column_and_none_is_missing() -> None:
    packer = Packer(Cut())
    assert packer.name("PASS") == packer.name("PASS") == 0 and packer.text("PASS") == 0
    assert packer.name(None) == MISSING and packer.text(None) == MISSING
    assert packer.text({"a": 1}) == 1 and packer.strings[1] == '{"a": 1}'


def test_the_cut_is_made_once_and_counted() -> None:
    packer = Packer(Cut(text_chars=20))
    short, long = "x" * 20, "y" * 50
    assert packer.strings[packer.text(short)] == short
    assert packer.strings[packer.text(long)] == "y" * 20 + "… [cut: 30 more characters]"
    assert packer.strings[packer.name(long)] == long  # a name (status, grader) is never cut
    assert packer.cut_note() == {"prompts": True, "text_chars": 20, "texts_cut": 1, "chars_cut": 30}
    with pytest.raises(CutError):
        Packer(Cut(text_chars=5))
