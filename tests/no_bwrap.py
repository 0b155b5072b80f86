"""A machine without bubblewrap, for a child process: a PATH that leaves ``bwrap`` out."""

from __future__ import annotations

import os
from pathlib import Path


def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH of links to every program of the usual directories except bwrap (a child inherits it)."""
    farm = tmp_path / "bin-without-bwrap"
    if farm.is_dir():
        return str(farm)
    farm.mkdir()
    for directory in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            if name != "bwrap" and not (farm / name).exists():
                (farm / name).symlink_to(os.path.join(directory, name))
    return str(farm)
