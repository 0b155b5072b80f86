"""JavaScript regular expressions (no flags, as promptfoo's ``regex`` builds them) read by Python's re.

A promptfoo pattern must match what ``new RegExp(value).test(output)`` matches, so it is translated,
not reused: ``\\d``, ``\\w`` and ``\\b`` are ASCII-only in JavaScript (re.ASCII); ``\\s`` is
JavaScript's Unicode whitespace set; ``.`` stops at ``\\n``, ``\\r``, U+2028 and U+2029; ``$`` is the
end of the input only; ``(?<name>`` and ``\\k<name>`` become Python's spelling. Python-only syntax
(inline flags ``(?i)``, ``(?P``, ``\\A``, ``\\Z``) is a SyntaxError, as it is in JavaScript.
"""

from __future__ import annotations

import re

JS_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
DOT = "[^\\n\\r\\u2028\\u2029]"


def translate(pattern: str) -> str:
    """The Python spelling of a flagless JavaScript pattern; re.error when JavaScript refuses it."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 >= len(pattern):
                raise re.error("\\ at end of pattern")
            e = pattern[i + 1]
            if e == "s":
                out.append(JS_SPACE if in_class else f"[{JS_SPACE}]")
            elif e == "S" and not in_class:
                out.append(f"[^{JS_SPACE}]")
            elif e in "AZ":
                raise re.error(f"\\{e} is not JavaScript")
            elif e == "k" and pattern.startswith("<", i + 2):
                end = pattern.index(">", i)
                out.append(f"(?P={pattern[i + 3:end]})")
                i = end + 1
                continue
            else:
                out.append(c + e)
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern.startswith("^]", i + 1) or pattern.startswith("]", i + 1):
                raise re.error("an empty class is not read the same way")
        elif c == ".":
            out.append(DOT)
        elif c == "$":
            out.append("\\Z")
        elif c == "(" and pattern.startswith("(?", i):
            rest = pattern[i + 2:]
            if rest.startswith("<") and not rest.startswith(("<=", "<!")):
                out.append("(?P<")
                i += 3
                continue
            if not rest.startswith((":", "=", "!", "<=", "<!")):
                raise re.error("inline flags and (?P are not JavaScript")
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def compile_js(pattern: str) -> re.Pattern[str]:
    return re.compile(translate(pattern), re.ASCII)
