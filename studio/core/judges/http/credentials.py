"""API keys: read from the OS keyring or a named environment variable, never from the library.

Also keeps keys out of logs: ``redact_logs`` installs a filter on the HTTP libraries' loggers that
replaces any known key (and any Authorization header value) with ``***``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from types import ModuleType

from studio.core.errors import StudioError
from studio.core.models.endpoints import EndpointConfig
from studio.core.store.endpoint_trust import check_approved, check_key_variable
from studio.core.store.endpoints import KEYRING_SERVICE

_KNOWN_SECRETS: set[str] = set()
_AUTH_RE = re.compile(
    r"(?i)(authorization|x-api-key)(['\"]?\s*[:=,]\s*['\"]?)(bearer\s+)?[^\s'\",)]+"
)
_HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.connection",
    "httpcore.proxy",
    "hpack",
    "studio.judges",
)


class KeyringUnavailable(StudioError):
    pass


#: keyring's macOS backend loads its Security API when keyring discovers its backends, through
#: ctypes' ``find_library`` (ldconfig, gcc and ld run three times over: ~0.05 s of a judge run's
#: start-up); off macOS that backend is never viable (its priority refuses before it reads the API)
_MACOS_API = "keyring.backends.macOS.api"
#: keyring's SecretService backend imports SecretStorage (and with it jeepney and cryptography's
#: primitives: ~0.015 s of a judge run's start-up) when keyring discovers its backends, then asks
#: jeepney for the D-Bus session bus, which it finds only through this variable (its
#: ``find_session_bus`` reads nothing else): with the variable unset that backend is never viable
_SESSION_BUS = "DBUS_SESSION_BUS_ADDRESS"
_SECRET_STORAGE = "secretstorage"


def _keyring() -> ModuleType:
    if sys.platform != "darwin":
        # the same backend is chosen: the macOS one still loads and refuses (platform.system() is
        # not Darwin); only its API, which nothing here calls, is not looked for
        sys.modules.setdefault(_MACOS_API, None)  # type: ignore[arg-type]
    if _SESSION_BUS not in os.environ:
        # the same backend is chosen: SecretService refuses for want of SecretStorage ("SecretStorage
        # required") where it would have refused for want of a session bus; with a bus named, it
        # is imported and asked as keyring asks it (tests/core/judges/test_judge_secrets.py)
        sys.modules.setdefault(_SECRET_STORAGE, None)  # type: ignore[arg-type]
    import keyring

    return keyring


def get_keyring_key(name: str) -> str | None:
    """The key stored for endpoint ``name``; None when absent or when no keyring backend exists."""
    try:
        key: str | None = _keyring().get_password(KEYRING_SERVICE, name)  # keyring's own type
        return key
    except Exception:  # no backend, locked wallet, D-Bus gone: treat as "no key stored"
        return None


def set_keyring_key(name: str, key: str) -> None:
    try:
        _keyring().set_password(KEYRING_SERVICE, name, key)
    except Exception as exc:
        raise KeyringUnavailable(
            f"cannot store the key in the OS keyring ({exc.__class__.__name__}); "
            "use --api-key-env VAR instead"
        ) from exc
    remember_secret(key)


def resolve_api_key(config: EndpointConfig, typed: str | None = None) -> str | None:
    """``typed`` (a key typed into the window, not stored yet), else the keyring's (a key the user
    stored), then the environment variable the config names.

    The one gate every key passes (a run's judges, a probe, generation, a jury, the window): for a
    config read from a library, the variable must be one the user allows and the destination one
    they approved (store/endpoint_trust.py), else a ``StudioError`` says why and nothing is sent.
    Called once per client, before the first call."""
    key = typed or get_keyring_key(config.name)
    if not key and config.api_key_env:
        if config.origin is not None:
            check_key_variable(config)
        key = os.environ.get(config.api_key_env) or None
    if key:
        remember_secret(key)
        check_approved(config)
    return key


def unset_key_variable(config: EndpointConfig) -> str | None:
    """The sentence for an endpoint whose key variable is not set (and no key is in the keyring for
    it): said before its first call, instead of sending no key and reporting the server's 401."""
    if not config.api_key_env or os.environ.get(config.api_key_env) or get_keyring_key(config.name):
        return None
    return (f"endpoint {config.name!r} takes its API key from the environment variable "
            f"{config.api_key_env}, which is not set: set {config.api_key_env} to the key (or store it in "
            f"the keyring with `grader-studio endpoints add {config.name} --replace ... --api-key-stdin`)")


def key_refused(config: EndpointConfig, status: int, said: str) -> str:
    """What a 401/403 from an endpoint means and what to fix: the key (where it came from, or
    that none was sent), never the grader."""
    if get_keyring_key(config.name):
        where = f"the key stored in the keyring for {config.name!r}"
        fix = "store the right key (`endpoints add ... --replace --api-key-stdin`)"
    elif config.api_key_env and os.environ.get(config.api_key_env):
        where = f"the key in {config.api_key_env}"
        fix = f"set {config.api_key_env} to a valid key"
    elif config.api_key_env:
        where = f"no key ({config.api_key_env} is not set)"
        fix = f"set {config.api_key_env} to the key"
    else:
        where = "no key (the endpoint names none)"
        fix = "give the endpoint a key (`endpoints add ... --replace --api-key-env VAR` or --api-key-stdin)"
    refused = "refused" if status == 401 else "denied access to"
    return (f"endpoint {config.name!r} {refused} {where} (HTTP {status}: {said}): {fix} "
            "(the grader is not at fault)")


def remember_secret(secret: str) -> None:
    """Register a secret so the log filter scrubs it wherever it appears."""
    if len(secret) >= 4:
        _KNOWN_SECRETS.add(secret)
    redact_logs()


def known_secrets() -> frozenset[str]:
    """The keys resolved or stored in this process (what answers and logs are cleaned of)."""
    return frozenset(_KNOWN_SECRETS)


def scrub(text: str) -> str:
    for secret in _KNOWN_SECRETS:
        if secret in text:
            text = text.replace(secret, "***")
    return _AUTH_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


class RedactingFilter(logging.Filter):
    """Rewrites a record's message with secrets replaced; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = RedactingFilter()


def redact_logs() -> None:
    """Idempotently attach the filter to the loggers that see requests."""
    for name in _HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
