"""The certificates a judge call trusts: where a company's root CA is given, and nothing looser.

The base store is OpenSSL's convention: ``SSL_CERT_FILE`` (a PEM bundle) and/or ``SSL_CERT_DIR``
(a hashed directory) when set, else certifi's bundle. An endpoint's ``ca_bundle``
(``endpoints add --ca-bundle FILE``) is added on top, so one endpoint behind a company's
inspecting proxy can trust its root without every other endpoint doing so. Certificate and host
name checks are always on: there is no switch to turn them off.
"""

from __future__ import annotations

import functools
import os
import ssl
from pathlib import Path

import certifi

from studio.core.safe_files import NotAFile, read_regular

from .errors import JudgeError


class TrustStoreError(JudgeError):
    """A CA bundle the studio was told to use cannot be read."""


def _stamp(path: str | None) -> tuple[str, float] | None:
    if not path:
        return None
    try:
        return path, os.stat(path).st_mtime
    except OSError:
        return path, -1.0


def ssl_context(ca_bundle: str | None = None) -> ssl.SSLContext:
    """The TLS context for an endpoint (one per trust store and file version: building one reads
    the bundles, ~25 ms)."""
    env_file = os.environ.get("SSL_CERT_FILE") or None
    env_dir = os.environ.get("SSL_CERT_DIR") or None
    return _build(_stamp(env_file), _stamp(env_dir), _stamp(ca_bundle))


@functools.lru_cache(maxsize=16)
def _build(
    env_file: tuple[str, float] | None,
    env_dir: tuple[str, float] | None,
    bundle: tuple[str, float] | None,
) -> ssl.SSLContext:
    # not create_default_context: it loads the system store too; only the stores named here count
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    if env_file or env_dir:
        _load(context, env_file[0] if env_file else None, env_dir[0] if env_dir else None,
              "SSL_CERT_FILE/SSL_CERT_DIR")
    else:
        context.load_verify_locations(cafile=certifi.where())
    if bundle is not None:
        _load(context, bundle[0], None, "the endpoint's CA bundle")
    context.set_alpn_protocols(["http/1.1"])
    return context


def _load(context: ssl.SSLContext, cafile: str | None, capath: str | None, what: str) -> None:
    """The bundle is read here, through ``open_regular`` (a FIFO or a device named as a bundle would
    hang OpenSSL's own open forever), and handed over as text; a folder of hashed certificates is
    OpenSSL's to read, so it must be a folder."""
    for path in (cafile, capath):
        if path and not Path(path).exists():
            raise TrustStoreError(f"{what} names {path!r}, which does not exist")
    if capath and not Path(capath).is_dir():
        raise TrustStoreError(f"{what} names {capath!r} as a folder of certificates, which is not a folder")
    try:
        cadata = read_regular(cafile).decode("ascii", errors="replace") if cafile else None
        context.load_verify_locations(capath=capath, cadata=cadata)
    except NotAFile as exc:
        raise TrustStoreError(f"{what}: {exc}") from None
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise TrustStoreError(
            f"{what} ({cafile or capath}) could not be read as PEM certificates ({exc})"
        ) from None
