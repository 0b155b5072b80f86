"""Judge failures a person can act on; each message names the endpoint, variable or field at fault."""

from __future__ import annotations

from studio.core.errors import StudioError


class JudgeError(StudioError):
    """A judge could not produce a grade for one sample (becomes that sample's error outcome)."""


class TemplateError(JudgeError):
    """A prompt template could not be rendered: bad syntax or a variable that does not exist."""


class UnknownVariable(TemplateError):
    def __init__(self, name: str, known: list[str] | None = None) -> None:
        hint = f" (known: {', '.join(sorted(known))})" if known else ""
        super().__init__(f"unknown template variable {name!r}{hint}")
        self.name = name


class EndpointCallError(JudgeError):
    """The endpoint failed after every retry; ``attempts`` says how hard we tried. ``rejected``:
    the server said the request itself is invalid (e.g. a field it does not support)."""

    def __init__(
        self, message: str, attempts: int = 1, status: int | None = None, rejected: bool = False
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.rejected = rejected


class CredentialsRefused(EndpointCallError):
    """The endpoint refused the key (HTTP 401/403), or a proxy its credentials (407): every call of
    the run would be refused the same way, so this is not one sample's error. A run stops at the
    first one (``GradingContext.halt``) and keeps the samples not yet graded for ``--resume``; the
    sentence names what to fix (the key or the proxy's credentials, never the grader)."""

    def __init__(self, message: str, status: int, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts, status=status, rejected=True)


class ResponseFormatError(JudgeError):
    """The judge answered, but not in the format its prompt asked for."""
