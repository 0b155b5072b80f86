"""Helpers the platform modules share: what a target drops, model names, keys, file text."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from studio.core.json_types import JsonValue
from studio.core.models import BuiltinOptions, GraderBase, GraderDefinition, JudgeBase
from studio.core.models.endpoints import EndpointConfig
from studio.core.safe_files import read_regular, read_regular_text
from studio.core.yaml_text import YamlRefused, read_yaml

from ._base import ImportResult, PlatformError

COMMON_FIELDS = frozenset({"kind", "key"})


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def unexported(grader: GraderBase, keep: Iterable[str], label: str) -> list[str]:
    """One warning per field that differs from its default and that ``label`` has no place for.

    Platform modules pass every field they do carry; anything else set on the grader is a loss the
    user must be told about, so that an export without warnings always imports back equal.
    """
    kept = COMMON_FIELDS | set(keep)
    out: list[str] = []
    for name, field in type(grader).model_fields.items():
        if name in kept:
            continue
        value = getattr(grader, name)
        if value != field.get_default(call_default_factory=True):
            out.append(f"{grader.key}: {name} = {_short(value)} is not exported ({label} has no field for it)")
    return out


INSPECT_OPTIONS = ("trim_punctuation", "numeric_reference", "normalization", "stop_words", "pattern", "match_all")


def inspect_options(options: BuiltinOptions, label: str) -> str | None:
    """Why a target without Inspect's text rules cannot carry these options, or None (all default)."""
    default = BuiltinOptions()
    for name in INSPECT_OPTIONS:
        if getattr(options, name) != getattr(default, name):
            return f"{label} has no comparison with Inspect's {name}={getattr(options, name)!r}"
    return None


def judge_model(grader: JudgeBase, label: str, warnings: list[str]) -> str | None:
    """The model name a platform gets: ``export --model``, the judge's model, else its endpoint's model.

    Endpoint settings (URLs, keys) stay in the studio; only a model id crosses over. The endpoint's
    *name* is written only when the export does not know the endpoint, and then with a warning.
    """
    override = chosen_model()
    config = endpoint_config(grader.endpoint)
    if override or grader.model:
        if grader.endpoint:
            warnings.append(f"{grader.key}: endpoint {grader.endpoint!r} is not exported; {label} gets the "
                            f"model id {override or grader.model!r}")
        return override or grader.model
    if config is not None and config.model:
        warnings.append(f"{grader.key}: endpoint {grader.endpoint!r} is not exported; {label} gets its "
                        f"model id {config.model!r}")
        return str(config.model)
    if grader.endpoint:
        warnings.append(
            f"{grader.key}: endpoint {grader.endpoint!r} is exported as the model name {grader.endpoint!r} "
            "(the export does not know the endpoint: export from the library or pass --model)"
        )
    return grader.endpoint


def slug(text: str, fallback: str = "imported") -> str:
    """A valid grader key from any name (file stem, metric name, task id)."""
    value = re.sub(r"[^a-z0-9_.-]+", "-", text.strip().lower()).strip("-._")
    return (value or fallback)[:128]


def read_text(path: Path) -> str:
    """A platform file's text; one that is not UTF-8 is refused with the line of its first bad byte."""
    try:
        data = read_regular(path)  # a FIFO or a device would never end
    except OSError as exc:
        raise PlatformError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PlatformError(f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x}); save it as UTF-8") from None


def read_json(path: Path) -> JsonValue:
    """A platform's JSON file, whole: a syntax error (a file cut short among them) names its line."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # json's messages that end in "at" ("Unterminated string starting at") say where after it
        raise PlatformError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg.removesuffix(' at')} at column "
                            f"{exc.colno})") from None
    except ValueError:  # an integer past Python's digit limit (sys.get_int_max_str_digits())
        found = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
        line = text.count("\n", 0, found.start()) + 1 if found else None
        raise PlatformError(f"{path}:{line}: a number has more than {sys.get_int_max_str_digits():,} digits "
                            "(quote it to keep it as text)") from None


def peek_json(path: Path) -> JsonValue:
    """Parsed JSON, or None for anything unreadable: detection must never raise."""
    if path.suffix.lower() != ".json":
        return None
    try:
        return json.loads(read_regular_text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def import_each(
    data: JsonValue,
    convert: Callable[[JsonValue, str | None], GraderDefinition],
    key: str | None,
    errors: tuple[type[Exception], ...] = (PlatformError,),
    fields: Callable[[JsonValue], Iterable[str]] | None = None,
) -> ImportResult:
    """A JSON list of graders (or a single one) converted item by item.

    ``key`` names the grader only when there is just one; an item ``convert`` refuses with one of
    ``errors`` is skipped (named by its place); ``fields(item)`` lists the keys its grader holds, the
    others are reported as not mapped. The caller decides what an import with no grader means.
    """
    from ._losses import skip, unmapped

    items = data if isinstance(data, list) else [data]
    result = ImportResult()
    for n, item in enumerate(items, 1):
        where = f"item {n}" if isinstance(data, list) else "the grader"
        kind = item.get("type") or item.get("graderType") if isinstance(item, dict) else type(item).__name__
        try:
            result.graders.append(convert(item, key if len(items) == 1 else None))
        except errors as exc:
            skip(result, where, kind, exc)
            continue
        if fields is not None:
            result.warnings += unmapped(item, fields(item), f"{where} ({kind})")
    return result


def _literal_blocks(data: JsonValue) -> JsonValue:
    """Multi-line strings as ``|`` blocks so prompts and code stay readable in the YAML."""
    if isinstance(data, dict):
        return {k: _literal_blocks(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_literal_blocks(v) for v in data]
    blockable = isinstance(data, str) and "\n" in data and not ("\r" in data or "\t" in data)
    if blockable and not any(line.endswith(" ") for line in data.split("\n")):
        return LiteralScalarString(data)
    return data


def dump_yaml(data: JsonValue) -> str:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    stream = io.StringIO()
    yaml.dump(_literal_blocks(data), stream)
    return stream.getvalue()


def load_yaml_text(text: str, origin: str) -> JsonValue:
    """A platform config through the studio's one YAML reader: anchors shared by a config are fine,
    as long as what their aliases repeat stays bounded (``studio/core/yaml_text.py``); one cut short
    is refused (``refuse_cut``)."""
    try:
        data = read_yaml(text, origin, aliases=True)
    except YamlRefused as exc:
        raise PlatformError(str(exc)) from None
    refuse_cut(text, origin)
    return data


def refuse_cut(text: str, origin: str) -> None:
    """Refuse a YAML or Python text that ends in the middle of a line. Cut short after a whole entry,
    inside a block of text or a comment, either still parses: the missing line break at its end is
    the sign left. Every file an export, a YAML writer or an editor's formatter writes ends with one
    (JSON needs no such check: a JSON text cut short does not parse)."""
    if text and not text.endswith(("\n", "\r")):
        raise PlatformError(f"{origin}:{text.count(chr(10)) + 1}: the file ends in the middle of a line, as a file "
                            "cut short does; if it is whole, end its last line with a line break")


def peek_yaml(path: Path) -> JsonValue:
    """The config for ``detect``, or None when it is not YAML at all. A YAML text the reader refuses
    (an alias bomb) is refused here with its sentence: no platform would read it."""
    if path.suffix.lower() not in {".yaml", ".yml"}:
        return None
    try:
        return read_yaml(read_regular_text(path), path.name, aliases=True)
    except (OSError, UnicodeDecodeError):  # unreadable, or not a file (open_regular): detection never raises
        return None
    except YamlRefused as exc:
        if exc.reason.startswith("not valid YAML"):
            return None
        raise PlatformError(str(exc)) from None


def dump_json(data: JsonValue) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def safe_relative(base: Path, ref: str) -> Path:
    """A file a suite/config refers to, refused when it points outside the suite's folder."""
    target = (base / ref).resolve()
    if not target.is_relative_to(base.resolve()):
        raise PlatformError(f"{ref!r} points outside {base}; refusing to read it")
    return target


def docstring(text: str) -> str:
    """A module docstring for generated Python: a literal from ``repr`` (never text pasted between
    quotes), so a name holding ``\"\"\"`` or a backslash still gives valid source."""
    return repr(text)


# The endpoints an export may describe (name -> EndpointConfig), set by the caller that has the
# library (``with export_endpoints(...)``); a judge's endpoint then becomes a callable provider.
_ENDPOINTS: ContextVar[Mapping[str, object] | None] = ContextVar("export_endpoints", default=None)


@contextmanager
def export_endpoints(endpoints: Mapping[str, object]) -> Iterator[None]:
    token = _ENDPOINTS.set(dict(endpoints))
    try:
        yield
    finally:
        _ENDPOINTS.reset(token)


_MODEL: ContextVar[str | None] = ContextVar("export_model", default=None)


@contextmanager
def export_model(model: str | None) -> Iterator[None]:
    """``export --model``: the model id every exported judge names, over the judge's and endpoint's."""
    token = _MODEL.set(model or None)
    try:
        yield
    finally:
        _MODEL.reset(token)


def chosen_model() -> str | None:
    return _MODEL.get()


def endpoint_config(name: str | None) -> EndpointConfig | None:
    known = _ENDPOINTS.get() or {}
    found = known.get(name) if name else None
    return found if isinstance(found, EndpointConfig) else None  # the library's endpoints by name
