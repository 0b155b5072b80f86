"""Which installed third-party files a worker may see: an allowlist of distributions, not a directory.

A worker normally has the standard library alone (``launch.third_party_dirs`` mounts an empty
directory over every site-packages). A grader that must run as another platform wrote it (an OpenAI
python criterion importing ``rapidfuzz``) gets the top-level entries of the allowed distributions
and of their own dependencies, each bind-mounted read-only under ``PACKAGES_MOUNT``: nothing else
of site-packages (the studio, SQLAlchemy, httpx, keyring ...) exists inside the sandbox, whatever
the grader does to ``sys.path``. The entries come from each distribution's installed file list
(its RECORD), so a wheel's vendored libraries (``numpy.libs``) and its ``.dist-info`` (read by
``importlib.metadata.version``) come along.
"""

from __future__ import annotations

import functools
import importlib.metadata as metadata
import os
import re

#: where the allowed entries appear inside the sandbox (appended to the worker's sys.path, after the
#: standard library, so no package can shadow a stdlib module)
PACKAGES_MOUNT = "/packages"

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(dist: metadata.Distribution) -> list[str]:
    """The distributions ``dist`` needs at run time: its Requires-Dist without the optional extras.
    Other markers (``python_version < "3.11"``) are not evaluated: a dependency of an allowed
    package that is installed is at worst visible without being needed."""
    names = []
    for line in dist.requires or []:
        requirement, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        if match := _NAME.match(requirement):
            names.append(match.group(1))
    return names


def _entries(dist: metadata.Distribution) -> set[str]:
    """Host paths of the top-level files and directories ``dist`` installed into its site-packages
    (not its scripts under ``../bin``, not ``__pycache__``)."""
    found: set[str] = set()
    for file in dist.files or []:
        parts = file.parts
        if not parts or parts[0] in ("..", "__pycache__") or os.path.isabs(parts[0]):
            continue
        path = os.path.realpath(str(dist.locate_file(parts[0])))
        if os.path.exists(path):
            found.add(path)
    return found


@functools.lru_cache(maxsize=8)
def visible_entries(distributions: tuple[str, ...]) -> tuple[str, ...]:
    """Host paths to mount for ``distributions`` and their dependencies, those installed in the
    studio's environment (a missing one is simply absent: its import fails naming the module).
    Sorted; one path per top-level name (the first distribution found wins)."""
    seen: set[str] = set()
    todo = [_normal(name) for name in distributions]
    paths: dict[str, str] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for path in sorted(_entries(dist)):
            paths.setdefault(os.path.basename(path), path)
        todo.extend(_normal(dep) for dep in _requires(dist))
    return tuple(sorted(paths.values()))
