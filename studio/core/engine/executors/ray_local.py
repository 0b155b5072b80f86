"""A Ray the studio starts for a run listens on 127.0.0.1 only.

Ray has no authentication: whoever reaches its GCS server, a raylet or a worker's gRPC port can
submit code that runs as the user. By default a Ray node binds every interface (0.0.0.0 / ::) and
advertises the machine's network address, and ``ray.init(_node_ip_address="127.0.0.1")`` is
rewritten to that address (``services.resolve_ip_for_localhost``). Ray's own single-machine mode,
the one it uses on macOS and Windows (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``), keeps the node on the
loopback address instead, and every Ray process then binds 127.0.0.1: the studio switches that mode
on while it starts a local Ray, for this process and for the Ray processes it spawns (they inherit
the environment), and starts no dashboard. A cluster given by ``--ray-address`` is the user's own
and keeps its own settings (README: what connecting to one exposes).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from ray._private import ray_constants

from studio.core.json_types import JsonObject
from studio.core.store.location import ENV_VAR

LOOPBACK = "127.0.0.1"
SINGLE_MACHINE_ENV = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR  # "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


#: variables that may hold the library's password (its URL, libpq's password): a Ray's processes never
#: need the library (the driver alone reads and writes it) and are never given them
LIBRARY_SECRETS = (ENV_VAR, "PGPASSWORD")


@contextlib.contextmanager
def single_machine() -> Iterator[None]:
    """Ray's single-machine mode while a local Ray starts (its processes keep it: they inherit the
    environment they were started with), and the library's secrets out of that environment;
    both restored afterwards for the rest of the host process."""
    before_flag = ray_constants.ENABLE_RAY_CLUSTER
    before = {name: os.environ.get(name) for name in (SINGLE_MACHINE_ENV, *LIBRARY_SECRETS)}
    os.environ[SINGLE_MACHINE_ENV] = "0"
    for name in LIBRARY_SECRETS:
        os.environ.pop(name, None)
    ray_constants.ENABLE_RAY_CLUSTER = False  # read at call time by services.get_node_ip_address
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before_flag
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def local_init_options() -> JsonObject:
    """``ray.init`` options of a local Ray: node on the loopback address, no dashboard."""
    return {"_node_ip_address": LOOPBACK, "include_dashboard": False, "dashboard_host": LOOPBACK}
