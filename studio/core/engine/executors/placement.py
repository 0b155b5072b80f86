"""Which graders a cluster grades and which stay on the driver, with the reason said to the user.

CPU-bound kinds (their descriptor says ``cluster``: function, bash, builtin, and composites made only of them) go to the cluster's
nodes, each node running them in the same sandbox as this machine. Judges and external endpoints
stay on the driver: they wait on an endpoint, not on a CPU, and their API keys live in this machine's
keyring, never shipped to a node. Two function-grader cases stay too: MKA1 ``grade_batch`` sees the
whole dataset in one call (nothing to split into blocks), and a model-backed grader reaches its judge
endpoint through the driver's bridge.
"""

from __future__ import annotations

from studio.core.kinds import get_kind, kinds
from studio.core.models.common import GraderBase, walk

DRIVER_NOTE = "judges stay on this machine (bound by the endpoint, not the CPU; keys never leave it)"


def cluster_note() -> str:
    """Which kinds a cluster's nodes grade, by their descriptors (``cluster``), in menu order."""
    names = [name for name, kind in kinds().items() if kind.cluster]
    listed = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)
    return f"{listed} graders run on the cluster's nodes, in the same sandbox"


def driver_reason(definition: GraderBase) -> str | None:
    """None when the whole grader can run on cluster nodes; else why it stays on this machine."""
    for grader in walk(definition):
        kind = grader.kind
        if grader.parts():  # a grader that combines others is placed by its parts
            continue
        if not get_kind(kind).cluster:  # the kind descriptor says whether a node may grade it
            return f"a {kind} grader calls an endpoint: {DRIVER_NOTE}"
        if (reason := grader.stays_here()) is not None:
            return reason
    return None
