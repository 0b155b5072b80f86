"""Decoded JSON: the one place studio/core spells ``Any``.

A value that came out of ``json.loads`` (an HTTP answer, a stored JSON column, a worker's message),
a platform's export or import document, or a pydantic ``model_dump`` headed for JSON has no static
shape: what it holds is checked where it is read (a pydantic model, an ``isinstance``, a ``.get``
with a default). These aliases name that boundary, so a reader sees "decoded JSON, check before
use" instead of a bare ``Any``; everything else in the core has a concrete type, a Protocol, a
TypeVar or ``object``. tests/test_types.py refuses a bare ``Any`` elsewhere, but for a short
allow-list that says why for each (a DB-API driver's rows, psycopg's cursor, Ray's actor handle...).
"""

from __future__ import annotations

from typing import Any, TypeAlias

#: any decoded JSON value (object, array, string, number, bool or null), its kind checked where read
JsonValue: TypeAlias = Any
#: a decoded JSON object: string keys, values checked where read
JsonObject: TypeAlias = dict[str, Any]
#: a decoded JSON array
JsonArray: TypeAlias = list[Any]
