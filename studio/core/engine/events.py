"""The run-event protocol: what ``run --progress-jsonl`` writes and the window's run worker reads.

One compact JSON object a line: ``started`` (the child's pid), ``progress`` (a ``Progress``),
``summary`` (as ``run --json``, the ``RunInfo`` and the exit code) and ``error`` (a sentence, with a
``user_error`` flag: true when it is the user's to fix, false for a bug). Both ends use this module,
so neither rebuilds the other's shapes by hand.
"""

from __future__ import annotations

import json

from studio.core.errors import bug_report, is_user_error
from studio.core.json_types import JsonObject, JsonValue

from .progress import Progress


def encode(event: str, **fields: JsonValue) -> str:
    """One line (no newline) for ``event`` with ``fields``."""
    return json.dumps({"event": event, **fields}, ensure_ascii=False, default=str)


def progress_fields(progress: Progress) -> JsonObject:
    eta = progress.eta
    return dict(run_id=progress.run_id, done=progress.done, total=progress.total,
                counts=progress.counts, elapsed=round(progress.elapsed, 4), rate=round(progress.rate, 3),
                eta=None if eta is None else round(eta, 3), written=progress.written_indices(),
                finished=progress.finished, in_flight=progress.in_flight)


def error_fields(exc: BaseException) -> JsonObject:
    """The class name is for the bug report only; the reader decides with ``user_error``, never by
    matching class names (which would tie the window to the core's exception hierarchy). A bug also
    carries ``report``: the sentence naming its traceback file (``bug_report``, written once)."""
    fields = dict(error=type(exc).__name__, user_error=is_user_error(exc), message=str(exc).strip())
    if not fields["user_error"]:
        fields["report"] = bug_report(exc)
    return fields


def decode(line: bytes | bytearray | str) -> JsonObject | None:
    """The event on ``line``; ``None`` for a line that is not ours (a library printing to stdout)."""
    line = line.strip()
    if not (line.startswith("{") if isinstance(line, str) else line.startswith(b"{")):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def progress_from(event: JsonObject) -> Progress:
    """The ``Progress`` a ``progress`` event carries (``written`` stays with the child)."""
    return Progress(
        run_id=int(event["run_id"]), done=int(event["done"]), total=int(event["total"]),
        counts=dict(event.get("counts") or {}), elapsed=float(event.get("elapsed") or 0.0),
        written=[], finished=bool(event.get("finished")),
        in_flight=event["in_flight"] if type(event.get("in_flight")) is int else None,
    )


def describe_error(event: JsonObject) -> str:
    """The sentence for an ``error`` event, as the window would have said it in-process."""
    name = event.get("error") or "Error"
    text = str(event.get("message") or "").strip()
    if event.get("user_error"):
        return text or name
    if isinstance(event.get("report"), str):  # the child wrote the traceback's file: the sentence names it
        return str(event["report"])
    return f"Something went wrong ({name}): {text}" if text else f"Something went wrong ({name})."
