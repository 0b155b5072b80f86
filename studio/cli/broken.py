"""How the CLI shows a library row that does not validate (``models/broken.py``): a row in its
listing marked BROKEN, a JSON record saying so, and one sentence each on stderr naming the row,
its author and how to delete or repair it. The command still succeeds: the rest is listed."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from studio.core.json_types import JsonObject
from studio.core.models.broken import BrokenRow


def broken_json(row: BrokenRow) -> JsonObject:
    return {"name": row.ident, "key": row.handle, "broken": True, "what": row.what, "author": row.author, "reason": row.reason,
            "repair": row.repair}


def say_broken(rows: Sequence[BrokenRow]) -> None:
    for row in rows:
        print(f"warning: {row.sentence()}", file=sys.stderr)
