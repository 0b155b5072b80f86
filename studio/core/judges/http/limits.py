"""Pacing for one endpoint: a requests-per-minute token bucket and retry delays."""

from __future__ import annotations

import asyncio
import random
import time
from email.utils import parsedate_to_datetime

#: the longest Retry-After we honour; a server asking for more gets our own backoff instead
MAX_RETRY_AFTER = 60.0
MAX_BACKOFF = 30.0


class RateLimiter:
    """Smooth requests-per-minute limit: tokens refill continuously, burst up to ``burst``."""

    def __init__(self, requests_per_minute: float, burst: int = 1) -> None:
        self._rate = requests_per_minute / 60.0
        self._capacity = float(max(1, burst))
        self._tokens = self._capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self._capacity, self._tokens + (now - self._stamp) * self._rate)
                self._stamp = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / self._rate)


def backoff_delay(attempt: int, base: float) -> float:
    """Exponential backoff with jitter: base * 2^attempt, scaled by a random factor in [0.5, 1]."""
    return min(MAX_BACKOFF, base * (2.0**attempt)) * (0.5 + random.random() / 2)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None when absent,
    unreadable or past ``MAX_RETRY_AFTER`` (a day-long wait would stall the run: the call is then
    retried on our own backoff, and fails after the usual attempts)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds or seconds > MAX_RETRY_AFTER:  # NaN or past the cap
        return None
    return max(0.0, seconds)
