"""Hypothesis strategies for hostile outside values, shared by every boundary test (importable because
pytest puts this folder on sys.path): text with NUL, lone surrogates, C0/C1 controls and terminal
escape sequences (CSI, OSC, DCS), huge strings, and JSON nested deeper than any reader recurses."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

#: escape sequences a terminal obeys: clear screen, cursor moves, window title (OSC 0), clipboard
#: (OSC 52), a hyperlink (OSC 8), a DCS string, a C1 CSI, a bell
ESCAPES = ["\x1b[2J", "\x1b[H", "\x1b[1A\x1b[2K", "\x1b]0;owned\x07", "\x1b]52;c;cHduZWQ=\x07",
           "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", "\x1bP1$qm\x1b\\", "\x9b2J", "\x07", "\r"]
#: one of each class: NUL, a lone high and low surrogate, a split pair, DEL, C1, line separators
SPECIALS = ["\x00", "\ud800", "\udfff", "\ud83d\ude00", "\x7f", "\x85", "\u2028", "\u202e", "\ufeff"]

hostile_pieces = st.one_of(
    st.sampled_from(ESCAPES), st.sampled_from(SPECIALS),
    st.characters(min_codepoint=0, max_codepoint=0x9F),  # every C0/C1 control and ASCII
    st.characters(blacklist_categories=()),  # any code point, surrogates included
    st.text(max_size=8),
)

#: text as an endpoint, a model or a teammate might send it: hostile pieces joined
hostile_text = st.lists(hostile_pieces, min_size=1, max_size=12).map("".join)


def nested(depth: int, leaf: Any = "x") -> Any:
    """A JSON value ``depth`` lists deep (built without recursion)."""
    value: Any = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_text(depth: int) -> str:
    """``nested(depth)`` as JSON text, without an encoder that would recurse."""
    return "[" * depth + '"x"' + "]" * depth


#: decoded JSON with hostile strings as keys and values, some of it nested deep
hostile_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), hostile_text),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(hostile_text, children, max_size=4)),
    max_leaves=20,
) | st.integers(min_value=65, max_value=3000).map(nested)
