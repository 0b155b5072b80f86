"""What ``run`` says about the sandbox before grading: degraded isolation is never silent.

Function and bash graders run untrusted code. Without bubblewrap the studio refuses them unless
the user opts in (``--allow-unsandboxed``, or the window's setting, which passes the flag); with the
opt-in every run says, on stderr (and as a ``warning`` line with ``--progress-jsonl``), that its
isolation is weaker.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Protocol

from studio.core.json_types import JsonValue
from studio.core.kinds import get_kind
from studio.core.models.common import walk

from .app import CliApp, CliError

if TYPE_CHECKING:
    from studio.core.engine.request import RunRequest


class Emits(Protocol):
    """Where ``--progress-jsonl`` lines go (cli/runs.py ``JsonLines``)."""

    def emit(self, event: str, **fields: JsonValue) -> None: ...


def _kinds_run(app: CliApp, request: RunRequest) -> set[str]:
    """The kinds of the request's grader and its parts when one of them runs code in the sandbox
    (their descriptors say: ``sandboxed``); empty when none does, or when the run or grader does not
    exist (the run itself reports that, with its own sentence)."""
    if request.resume is None and not (request.grader and request.dataset):
        return set()
    try:
        if request.resume is not None:
            info = app.library.runs.get(request.resume)
            definition = app.library.graders.version(info.grader_key, info.grader_version).definition
        else:
            key = str(request.grader)
            record = app.library.graders.get(key)
            definition = app.library.graders.version(key, request.version or record.current_version).definition
    except Exception:  # noqa: BLE001 - reported by the run with its own sentence
        return set()
    kinds = {grader.kind for grader in walk(definition)}
    return kinds if any(get_kind(kind).sandboxed for kind in kinds) else set()


def warn_if_degraded(app: CliApp, request: RunRequest, allowed: bool, stream: Emits | None = None) -> None:
    """Apply ``--allow-unsandboxed`` (``allowed``); refuse (exit 2) or warn when the request's grader
    runs code without bubblewrap. A grader or run that does not exist is left to the run itself to report."""
    kinds = _kinds_run(app, request)
    if allowed or "studio.core.sandbox.settings" in sys.modules:  # else its opt-in is still unset
        from studio.core.sandbox.settings import allow_unsandboxed

        allow_unsandboxed(allowed)
    if not kinds:
        return
    if "javascript" in kinds:
        from studio.core.sandbox.node import find_node, missing_reason

        if find_node() is None:  # refused before a run exists, not as an error on every sample
            raise CliError(missing_reason(), code=2)
    # the sandbox is imported only for a grader that runs code: a judge run does not pay for it
    from studio.core.sandbox.launch import detect_mode, refusal
    from studio.core.sandbox.settings import SandboxSettings

    settings = SandboxSettings()
    if reason := refusal(settings):
        raise CliError(reason, code=2)
    mode = settings.mode or detect_mode()
    if mode == "bubblewrap":
        return
    message = (f"warning: isolation is degraded: bubblewrap is not available, this grader's code runs in the "
               f"'{mode}' sandbox mode because --allow-unsandboxed was given (see `grader-studio sandbox-info` "
               "and the README's sandbox section for what it does not protect)")
    print(message, file=sys.stderr, flush=True)
    if stream is not None:
        stream.emit("warning", message=message.removeprefix("warning: "))
