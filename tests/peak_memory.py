"""How much memory a test made the studio (this process) hold: peak RSS growth since a mark.

``getrusage``'s ``ru_maxrss`` is the peak of the whole pytest process, so a bound on it depends on
every test that ran before (the suite grew, and the same hostile test passed alone and failed late
in a full run). Linux lets a process reset its own peak (``/proc/self/clear_refs``, "5"), so a test
marks the start and reads the peak reached since (``VmHWM``) against the resident size at the mark.
"""

from __future__ import annotations

import resource
from pathlib import Path

#: what one hostile input may add to the studio's resident memory at its peak
GROWTH_LIMIT_MB = 200.0


def _status_mb(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class PeakGrowth:
    """``mark()`` at the start; ``mb()`` is the peak resident growth since then."""

    def __init__(self) -> None:
        self.start = 0.0
        self.resettable = False

    def mark(self) -> PeakGrowth:
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
            self.resettable = True
        except OSError:
            self.resettable = False
        self.start = _status_mb("VmRSS") if self.resettable else resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss / 1024
        return self

    def mb(self) -> float:
        peak = _status_mb("VmHWM") if self.resettable else None
        if peak is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return max(0.0, peak - (self.start or 0.0))
