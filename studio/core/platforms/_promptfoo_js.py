"""promptfoo ``javascript`` assertions -> ``javascript`` graders (run by Node in the sandbox).

Inline code keeps its text (plain ``{{ var }}`` placeholders are rendered with the test's vars at run
time, as promptfoo renders the value with Nunjucks); ``file://check.js[:fn]`` carries the file's
source in the definition. What cannot run the way promptfoo runs it is refused with the reason, never
imported as something else: Nunjucks tags and filters, ES module imports, a missing Node.
"""

from __future__ import annotations

import re
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.models import JavascriptGrader
from studio.core.sandbox.node import find_node, missing_reason

from ._base import PlatformError
from ._fields import read_text, safe_relative

JS_FILES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")
_PLACEHOLDER = re.compile(r"\{\{\s*[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\s*\}\}")
_ESM_IMPORT = re.compile(r"^\s*import\s.*\bfrom\s|^\s*import\s*['\"]", re.MULTILINE)
_EXPORT_DEFAULT = re.compile(r"^(\s*)export\s+default\s+", re.MULTILINE)
_EXPORT_NAMED = re.compile(r"^(\s*)export\s+(async\s+function\*?|function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)",
                           re.MULTILINE)
#: the fields of a javascript assertion the grader holds (metric becomes the key; weight matters in
#: an assert-set, where the component keeps it)
MAPPED = {"type", "value", "threshold", "metric", "config", "weight"}


def commonjs(source: str, name: str) -> str:
    """An ES module that only exports (no imports) as the CommonJS module the harness loads."""
    if _ESM_IMPORT.search(source):
        raise PlatformError(f"{name} imports other ES modules; only self-contained CommonJS or export-only "
                            "modules run in the sandbox")
    names: list[str] = []

    def named(match: re.Match[str]) -> str:
        names.append(match.group(3))
        return f"{match.group(1)}{match.group(2)} {match.group(3)}"

    out = _EXPORT_NAMED.sub(named, source)
    out = _EXPORT_DEFAULT.sub(r"\1module.exports.default = ", out)
    if re.search(r"^\s*export\s", out, re.MULTILINE):
        raise PlatformError(f"{name} uses an export form the studio does not convert (export {{ ... }})")
    return out + "".join(f"\nmodule.exports.{n} = {n};" for n in names)


def javascript_grader(item: JsonObject, key: str, base: Path, negate: bool) -> JavascriptGrader:
    """The grader for one javascript assertion, or PlatformError saying why it cannot run here."""
    if find_node() is None:
        raise PlatformError(missing_reason())
    value = item.get("value")
    if not isinstance(value, str) or not value.strip():
        raise PlatformError("the assertion has no JavaScript code (value)")
    threshold = item.get("threshold")
    if threshold is not None and not isinstance(threshold, int | float):
        raise PlatformError(f"threshold {threshold!r} is not a number")
    config = item.get("config")
    if config is not None and not isinstance(config, dict):
        raise PlatformError("config must be a mapping")
    common: JsonObject = {"key": key, "negate": negate, "threshold": threshold, "config": config or None}
    if value.startswith("file://"):
        ref = value.removeprefix("file://")
        file_ref, _, fn = ref.partition(":")
        if not file_ref.endswith(JS_FILES):
            raise PlatformError(f"{file_ref} is not a JavaScript file")
        if file_ref.endswith((".ts", ".cts", ".mts")):
            raise PlatformError(f"{file_ref} is TypeScript, which Node runs only after compiling it")
        source = read_text(safe_relative(base, file_ref))
        if file_ref.endswith(".mjs") or _EXPORT_DEFAULT.search(source) or _EXPORT_NAMED.search(source):
            source = commonjs(source, file_ref)
        return JavascriptGrader(source=source, form="module", function_name=fn or None, origin=value, **common)
    rest = _PLACEHOLDER.sub("", value)
    if "{{" in rest or "{%" in rest or "{#" in rest:
        raise PlatformError("the code uses Nunjucks tags or filters; only plain {{ var }} placeholders are rendered")
    return JavascriptGrader(source=value, form="inline", **common)
