"""Reading an error answer: what the server said, and whether asking again could ever help.

llama-cpp-python answers a request field it does not support with HTTP 500 and a body such as
"validation error ..." or "logprobs is not supported ..."; retrying that request five times only
hides the reason. An error whose body says the request itself is invalid is final, and the start of
every error body is shown to the user.
"""

from __future__ import annotations

import json
import re

from .credentials import scrub
from .redaction import redact_text

EXCERPT_CHARS = 300

_REJECTED = re.compile(
    r"validation error|not supported|unsupported|invalid request|invalid_request|"
    r"extra (inputs|fields) (are )?not permitted|unrecognized (request )?argument|"
    r"unknown (field|parameter)|field required|must be one of",
    re.IGNORECASE,
)


def body_excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The server's own message when the body is an OpenAI-style error, else the body's start."""
    message = text
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            message = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    message = " ".join(scrub(redact_text(message)).split())
    return message[:limit] + ("..." if len(message) > limit else "")


def request_rejected(status: int, text: str) -> bool:
    """True when the answer says the request is invalid (so the same request fails again)."""
    if status in (400, 404, 405, 413, 415, 422):
        return True
    return status >= 500 and bool(_REJECTED.search(text[:4000]))
