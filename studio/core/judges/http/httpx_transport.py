"""Measurement only (bench/judge_path.py, issue 34): the judge path's pool on httpx, tuned (one
client per endpoint, limits sized to the endpoint's concurrency, no env lookups, no redirects)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from .transport import Reply, _Slot


class EndpointPool:
    def __init__(self, concurrency: int, connect_timeout: float, tls: bool = True, **_: Any) -> None:
        self.concurrency = max(1, concurrency)
        self._free = asyncio.Semaphore(self.concurrency)
        self._slot = _Slot(self)  # type: ignore[arg-type]
        self._client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=self.concurrency,
                                max_keepalive_connections=self.concurrency),
            timeout=httpx.Timeout(None, connect=connect_timeout), trust_env=False,
            follow_redirects=False)

    def slot(self) -> _Slot:
        return self._slot

    async def send(self, lease: Any, method: str, url: str, headers: dict[str, str],
                   body: bytes = b"", max_body: int = 0) -> Reply:
        response = await self._client.request(method, url, headers=headers, content=body or None)
        return Reply(response.status_code, response.headers, response.content)

    async def aclose(self) -> None:
        await self._client.aclose()


_SHARED: dict[str, Any] = {}


def open_pools(key: str, concurrency: int, connect_timeout: float, tls: bool = True, **_: Any) -> Any:
    if key not in _SHARED:
        _SHARED[key] = [EndpointPool(concurrency, connect_timeout, tls), 0]
    _SHARED[key][1] += 1
    return _SHARED[key][0]


async def close_pools(pools: Any) -> None:
    for key, entry in list(_SHARED.items()):
        if entry[0] is pools:
            entry[1] -= 1
            if entry[1] == 0:
                del _SHARED[key]
                await pools.aclose()
