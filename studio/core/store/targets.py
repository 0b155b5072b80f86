"""What a run names, as the library answers it: the (key, version) of every grader it would grade.

Why in the store: which graders a grader key, a suite key or a list of keys names, at which versions,
and why a name names nothing (a grader or suite in the trash, a near key) are questions about the
library alone. The engine asks once (``targets``) and gets the answer or the sentence; it used to ask
piecemeal and climb back to helpers of its own between the questions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.core.near_names import did_you_mean

from .errors import LibraryError, NotFound
from .suites import InvalidSuite

if TYPE_CHECKING:
    from .library import Library


def targets(library: Library, name: str | None, version: int | None = None,
            graders: list[str] | None = None) -> list[tuple[str, int]]:
    """(key, version) of every grader a run would grade: ``graders`` (``run --graders a,b,c``), a
    suite's members (each at its pinned or current version; ``version`` is then the suite's), or the
    one grader ``name`` (a grader wins when a key is both, as ``start_run`` decides)."""
    if graders is not None:
        keys = [k.strip() for k in graders if k.strip()]
        return [(k, library.graders.get(k).current_version) for k in keys]
    if not name:
        raise InvalidSuite("name a grader or a suite to run")
    try:
        record = library.graders.get(name)
    except LibraryError as exc:
        if not library.suites.exists(name):
            raise unknown_target(library, name, exc) from None
        suite = library.suites.version(name, version or library.suites.get(name).current_version)
        return [(m.grader, m.version or library.graders.get(m.grader).current_version)
                for m in suite.definition.graders]
    return [(record.key, version or record.current_version)]


def unknown_target(library: Library, name: str, error: LibraryError) -> LibraryError:
    """What ``run NAME`` says when NAME is neither a grader nor a suite: a suite in the trash does
    not run (said so, rather than that no grader has that key); a grader in the trash keeps its own
    sentence; else near keys of both are offered."""
    try:
        library.suites.get(name, include_deleted=True)
    except LibraryError:
        pass
    else:
        return InvalidSuite(f"suite {name!r} is in the trash; restore it first (grader-studio suites restore {name})")
    if "in the trash" in str(error):
        return error
    keys = [r.key for r in library.graders.list()] + [r.key for r in library.suites.list()]
    return NotFound(f"no grader or suite with key {name!r}{did_you_mean(name, keys)}")
