"""The one base of every error a person should read as a sentence.

Locked, missing, an invalid file, an unreachable endpoint, a full disk ... each subclass's message
says what is wrong and what to do. The window shows a ``StudioError`` as a message and anything else
as a bug report; the CLI prints it and exits 1; a child run flags it (``user_error``) on its error
line so the window can tell the two apart without knowing our class names.
"""

from __future__ import annotations


class StudioError(Exception):
    """Something the user (not the code) can fix; ``str(error)`` is the sentence to show.

    ``exit_code``: the CLI's exit status for this error when the class fixes one (a refused run
    request: 2); None lets the command decide (1 unless it refuses runs: 2)."""

    exit_code: int | None = None


def is_user_error(exc: BaseException) -> bool:
    """A sentence to show as it is (ours, a bad value, the operating system saying no), not a bug."""
    from pydantic import ValidationError

    return isinstance(exc, (StudioError, ValueError, OSError, ValidationError))
