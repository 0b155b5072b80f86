"""A library file is opened only through SQLite, never beside it (SQLite's "How To Corrupt" §2.2).

On POSIX, SQLite's locks are ``fcntl()`` record locks, which belong to a process and a file, not to a
descriptor: closing *any* descriptor the process has on the file drops *every* lock the process
holds on it. SQLite shares one descriptor among its connections in a process and defers closing it,
so its own connections are safe; anything else that opens the library, its ``-wal``, ``-shm`` or
``-journal`` and closes it (a file dialog guessing a file's type, a preview, a copy, a hash) silently
unlocks the library. The next writer in another process then believes it is alone, checkpoints and
deletes the ``-wal`` and ``-shm`` this process still has open, and from then on the two processes
write to different files: writes are lost and the file ends up malformed.

This module knows the library files this process has open through SQLite (``track_engine`` counts a
library engine's connections as its pool opens and closes them) and refuses, with a sentence, any
other open, rename, removal or truncation of them by Python code in the process: an audit hook
(PEP 578) sees every ``open()``, ``os.open``, ``os.replace``, ``os.remove`` whatever module calls
them, so a dropped file, a ``--out`` naming the library or a helper copying it fails loudly instead
of unlocking it. Qt's C++ code is out of the hook's sight: the window's file dialogs keep away by
themselves (``studio/ui/file_dialogs.py``) and ask ``is_library_file`` what to hide.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine

from .errors import LibraryError

#: the files SQLite keeps beside a library (WAL mode's log and shared index; a rollback journal)
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")

#: the audited operations that would open (and then close), replace, remove or truncate a file: which
#: of their arguments are paths, each with the argument holding the folder it is relative to (None:
#: the current folder; ``os.open`` does not pass its ``dir_fd`` on, ``shutil.rmtree`` opens only
#: folders that way and removes files with ``os.remove``'s)
_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "open": ((0, None),), "os.rename": ((0, 2), (1, 3)), "os.remove": ((0, 1),), "os.truncate": ((0, None),)}


class LibraryFileInUse(LibraryError):
    """Code in this process asked to open, replace or remove a file of a library it has open."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} is a file of the library open here: the studio touches it only through the "
            "library's own connection (opening it any other way would unlock the library for other "
            "processes and lose their work); choose another file")
        self.path = path


#: re-entrant: a collected engine's finalizer may run (in a garbage collection) while a thread holds it
_lock = threading.RLock()
#: real path of a library file -> its SQLite connections open in this process
_counts: dict[str, int] = {}
#: read without the lock by the audit hook: rebuilt whole on every change, never mutated
_paths: frozenset[str] = frozenset()
_names: frozenset[str] = frozenset()
_inodes: frozenset[tuple[int, int]] = frozenset()
_hooked = False


def library_files(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The library file's real path and the files SQLite keeps beside it."""
    main = os.path.realpath(path)
    return (main, *(main + suffix for suffix in SIDE_SUFFIXES))


def _publish() -> None:
    global _paths, _names, _inodes
    paths = frozenset(name for main in _counts for name in library_files(main))
    inodes = set()
    for main in _counts:  # the main file by identity too: a link or another spelling of its name
        try:
            st = os.stat(main)
        except OSError:
            continue
        inodes.add((st.st_dev, st.st_ino))
    _paths, _names, _inodes = paths, frozenset(os.path.basename(p) for p in paths), frozenset(inodes)


def hold(path: str | os.PathLike[str]) -> None:
    """A SQLite connection on ``path`` opened in this process."""
    global _hooked
    key = os.path.realpath(path)
    with _lock:
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        _counts[key] = _counts.get(key, 0) + 1
        if _counts[key] == 1:
            _publish()


def release(path: str | os.PathLike[str], count: int = 1) -> None:
    """``count`` SQLite connections on ``path`` closed."""
    key = os.path.realpath(path)
    with _lock:
        left = _counts.get(key, 0) - count
        if left > 0:
            _counts[key] = left
            return
        _counts.pop(key, None)
        _publish()


def held() -> frozenset[str]:
    """The real paths of every library file (and the files beside it) open in this process."""
    return _paths


def is_library_file(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> bool:
    """Whether ``path`` names a file of a library this process has open through SQLite (a ``-wal``,
    ``-shm`` or ``-journal`` beside one included; the library file also through a link)."""
    if not _names:
        return False
    try:
        name = os.fsdecode(os.fspath(path))
    except TypeError:
        return False  # a descriptor: its file was opened already
    if os.path.basename(name) in _names and os.path.realpath(name) in _paths:
        return True
    try:
        st = os.stat(name)
    except (OSError, ValueError):
        return False
    return (st.st_dev, st.st_ino) in _inodes


def refuse(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> None:
    """Raise ``LibraryFileInUse`` when ``path`` is a file of a library open here."""
    if is_library_file(path):
        raise LibraryFileInUse(os.fsdecode(os.fspath(path)))


def _audit(event: str, args: tuple[object, ...]) -> None:
    where = _EVENTS.get(event)
    if where is None or not _names:
        return
    for at, folder_at in where:
        path = args[at] if at < len(args) else None
        if not isinstance(path, (str, bytes, os.PathLike)):
            continue  # a descriptor: its file was opened already
        dir_fd = args[folder_at] if folder_at is not None and folder_at < len(args) else None
        if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(os.fsdecode(os.fspath(path))):
            try:  # a name inside an open folder (shutil.rmtree's), not in the current one
                path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fsdecode(os.fspath(path)))
            except OSError:
                continue  # where it is cannot be told here (no /proc): not the library's files to judge
        refuse(path)


def track_engine(engine: Engine, path: str | os.PathLike[str]) -> None:
    """Count ``engine``'s SQLite connections on ``path`` as its pool opens and closes them; those
    still open when the engine is collected are counted closed with it."""
    from sqlalchemy import event

    key = os.path.realpath(path)
    live = [0]

    def opened(*_: object) -> None:
        hold(key)
        live[0] += 1

    def closed(*_: object) -> None:
        if live[0] > 0:
            live[0] -= 1
            release(key)

    event.listen(engine, "connect", opened)
    event.listen(engine, "close", closed)
    event.listen(engine, "close_detached", closed)
    weakref.finalize(engine, _forget, key, live)


def _forget(key: str, live: list[int]) -> None:
    if live[0] > 0:
        release(key, live[0])
        live[0] = 0
