"""The HTML file itself: one page, its data, script and style inline, under a strict CSP.

The page's code (viewer.js, viewer.css, package data beside this module) is the same in every file;
only the data differs. The Content-Security-Policy allows nothing but that script and that style, by
their SHA-256 hashes (``default-src 'none'``: no network, no other script, no plugin, no form), so a
sample's ``<script>`` or ``<img onerror>`` could not run even if the page ever put it into markup —
and it never does: every string is data, JSON in a ``<script type="application/json">`` element
(``pack.script_json``), shown with ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
import html
from functools import cache
from importlib import resources

from studio.core.json_types import JsonObject

from .pack import script_json

DATA_ID = "studio-data"


@cache
def asset(name: str) -> str:
    """viewer.js or viewer.css, as shipped in the package."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def csp(script: str, style: str) -> str:
    """The page's policy: its one script and one style by hash, images only as data: URLs, nothing else."""
    return (f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; img-src data:; "
            "base-uri 'none'; form-action 'none'")


def render(title: str, data: JsonObject) -> str:
    """The whole file's text."""
    script, style = asset("viewer.js"), asset("viewer.css")
    if "</" in script or "</" in style:  # would close its element early: a bug in the assets, not in data
        raise AssertionError("viewer.js and viewer.css must not contain '</'")
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp(script, style)}\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>This page shows a Grader Studio run; it needs JavaScript (it makes no network request).</noscript>\n"
        f"<script type=\"application/json\" id=\"{DATA_ID}\">{script_json(data)}</script>\n"
        f"<script>{script}</script>\n</body>\n</html>\n"
    )
