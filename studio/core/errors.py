"""The one base of every error a person should read as a sentence.

Locked, missing, an invalid file, an unreachable endpoint, a full disk ... each subclass's message
says what is wrong and what to do. The window shows a ``StudioError`` as a message and anything else
as a bug report (``bug_report``: the traceback written to a file the sentence names, as the CLI's
``main`` does); the CLI prints it and exits 1; a child run flags it (``user_error``) on its error
line so the window can tell the two apart without knowing our class names.
"""

from __future__ import annotations


class StudioError(Exception):
    """Something the user (not the code) can fix; ``str(error)`` is the sentence to show.

    ``exit_code``: the CLI's exit status for this error when the class fixes one (a refused run
    request: 2); None lets the command decide (1 unless it refuses runs: 2)."""

    exit_code: int | None = None


def is_user_error(exc: BaseException) -> bool:
    """A sentence to show as it is: a ``StudioError``, or a definition the user wrote that does not
    validate (pydantic's ``ValidationError``, which the window lists field by field). A bare
    ``ValueError`` or ``OSError`` that reaches the CLI's ``main`` or a window's error box came from our
    own code: a bug, reported with its traceback file (``bug_report``), never shown as a sentence."""
    if isinstance(exc, StudioError):
        return True
    from pydantic import ValidationError

    return isinstance(exc, ValidationError)


def bug_report(exc: BaseException) -> str:
    """Write the traceback to a file of its own and say where: the one sentence for a bug, which the
    CLI's ``main`` prints and the window's error boxes show (a ``ValueError`` or ``OSError`` that
    reaches them came from our code, not from something the user can fix). Written once per
    exception: a run child's error line and its ``main`` name the same file."""
    written = getattr(exc, "__bug_report__", None)
    if isinstance(written, str):
        return written
    import contextlib
    import os
    import sys
    import tempfile
    import time
    import traceback
    from pathlib import Path

    from studio import __version__
    from studio.core.safe_files import write_text
    from studio.core.urls import mask_urls

    # a library URL may carry a password: every URL in the report (the command line, a message,
    # the traceback's lines) is masked, and the file is its owner's alone (docs/security.md)
    text = mask_urls("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    name = f"grader-studio-bug-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    where = Path(tempfile.gettempdir()) / name
    try:
        write_text(where, f"grader-studio {__version__}\n{masked_argv(sys.argv)}\n\n{text}", mode=0o600)
    except OSError:
        sys.stderr.write(text)  # nowhere to write it: the traceback itself is the report
        sentence = f"Grader Studio hit a bug ({type(exc).__name__}); the traceback is above"
    else:
        sentence = (f"Grader Studio hit a bug ({type(exc).__name__}: {mask_urls(str(exc).strip())[:200]}); please report it "
                    f"with the traceback in {where}")
    with contextlib.suppress(AttributeError):  # an exception type without a __dict__
        exc.__bug_report__ = sentence  # type: ignore[attr-defined]
    return sentence


def masked_argv(argv: list[str]) -> str:
    """A command line as a bug report keeps it: every argument that is or holds a URL masked
    (``--db postgresql://u:PASSWORD@h/db``, ``--db=...``), the rest as typed."""
    from studio.core.urls import is_url, mask_urls, masked

    def one(arg: str) -> str:
        if is_url(arg):
            return masked(arg)
        option, equals, value = arg.partition("=")
        if equals and option.startswith("-") and is_url(value):
            return f"{option}={masked(value)}"
        return mask_urls(arg)

    return " ".join(one(arg) for arg in argv)
