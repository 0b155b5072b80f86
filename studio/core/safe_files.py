"""Every file the studio writes for a user (exports, CSV/JSONL reports, label files, screenshots)
goes through here, so none of them follows a link someone planted where the file will go.

A file is written to a fresh temporary name in its target directory (``O_CREAT | O_EXCL |
O_NOFOLLOW``: never an existing file, never through a link), then renamed over the target, which
replaces the directory entry instead of writing through it. A target that already is a symbolic
link is refused, and so is a link among the folders an export creates below its output folder: the
export was told to write into that folder, not wherever a link inside it points.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class UnsafeTarget(OSError):
    """A write refused because its target (or a folder on the way to it) is a symbolic link."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"refusing to write {path}: {why}")
        self.filename = str(path)
        self.strerror = why

    def __str__(self) -> str:
        return str(self.args[0])


def _refuse_link(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UnsafeTarget(path, "it is a symbolic link (remove it or choose another name)")
    if stat.S_ISDIR(mode):
        raise UnsafeTarget(path, "it is a folder")


def _temp_beside(path: Path, mode: int = 0o666) -> tuple[Path, int]:
    """A new file next to ``path`` that nobody else created (O_EXCL) and that is not a link
    (``mode`` before the umask: 0o600 for a file only its owner may read)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
    for _ in range(100):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return temp, os.open(temp, flags, mode)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {path}")


@contextlib.contextmanager
def open_binary(path: str | Path, *, mode: int = 0o666) -> Iterator[io.BufferedWriter]:
    """A binary file that becomes ``path`` when the block ends without an error (else nothing is
    left behind)."""
    path = Path(path)
    _refuse_link(path)
    temp, fd = _temp_beside(path, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        _refuse_link(path)  # a link planted while the file was being written
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def open_text(path: str | Path, *, newline: str | None = None, mode: int = 0o666) -> Iterator[TextIO]:
    """UTF-8 text written as ``open_binary`` writes bytes (``newline=""`` for the csv module)."""
    with open_binary(path, mode=mode) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline=newline)
        yield text
        text.flush()
        text.detach()  # open_binary closes the file


def write_bytes(path: str | Path, data: bytes) -> Path:
    with open_binary(path) as handle:
        handle.write(data)
    return Path(path)


def write_text(path: str | Path, text: str, *, mode: int = 0o666) -> Path:
    with open_text(path, mode=mode) as handle:
        handle.write(text)
    return Path(path)


def make_dirs(root: Path, relative: Path) -> Path:
    """Create the folders of ``relative`` below ``root`` and return them, refusing any that is a link
    (``root`` itself may be one: the user chose it)."""
    if relative.is_absolute() or ".." in relative.parts:
        raise UnsafeTarget(root / relative, "the path leaves the output folder")
    folder = root
    for part in relative.parts:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            os.mkdir(folder)
            continue
        if stat.S_ISLNK(mode):
            raise UnsafeTarget(folder, "a folder on the way is a symbolic link")
        if not stat.S_ISDIR(mode):
            raise UnsafeTarget(folder, "a file is where a folder should be")
    return folder


def write_tree(root: str | Path, files: Mapping[str, str]) -> list[Path]:
    """Write ``files`` (relative path -> text) below the folder ``root``; returns the paths written."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, text in files.items():
        relative = Path(rel)
        folder = make_dirs(root, relative.parent)
        written.append(write_text(folder / relative.name, text))
    return written


# --- reading a file a user named -------------------------------------------------------------------
# A CA bundle, a dataset, a grader or labels file is named by a person (or a teammate's library row):
# a FIFO there would block the open (and every read) forever, a character device such as /dev/zero
# or /dev/urandom never ends, a folder or a socket cannot be read at all. Every such read goes through
# ``open_regular``: the open itself cannot block (O_NONBLOCK: a FIFO with no writer opens at once),
# and what was opened is checked (fstat, not the name: nothing can be swapped in between) to be a
# regular file before a byte is read.

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotAFile(OSError):
    """A path a user named that is not a regular file (a FIFO, a device, a folder, a socket):
    ``str()`` is the sentence to show."""

    def __init__(self, path: str | Path, what: str) -> None:
        super().__init__(f"{path} is {what}, not a regular file: name a file to read")
        self.filename = str(path)
        self.strerror = f"it is {what}, not a regular file"

    def __str__(self) -> str:
        return str(self.args[0])


def describe(mode: int) -> str:
    """What a non-regular file is, in a few words for a sentence."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a file, in words for a sentence (None: a regular file). Only
    looks (stat never blocks); the read itself still goes through ``open_regular``."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else f"it is {describe(mode)}, not a regular file"


def _regular_fd(path: str | Path, *, follow: bool = True) -> int:
    name = os.fspath(path)
    # a socket cannot be opened at all (ENXIO): say what it is first
    mode = (os.stat(name) if follow else os.lstat(name)).st_mode
    if not stat.S_ISREG(mode):
        raise NotAFile(name, describe(mode))
    fd = os.open(name, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow else _NOFOLLOW))
    try:
        mode = os.fstat(fd).st_mode  # what was opened, not what the name pointed at a moment ago
        if not stat.S_ISREG(mode):
            raise NotAFile(name, describe(mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | Path, *, buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file (else ``NotAFile``; the usual
    ``OSError`` when it is missing or unreadable)."""
    return os.fdopen(_regular_fd(path), "rb", buffering=buffering)


def open_regular_text(path: str | Path, *, newline: str | None = None, encoding: str = "utf-8") -> TextIO:
    """``open_regular`` as text (``newline=""`` for the csv module, ``encoding="utf-8-sig"`` to drop a BOM)."""
    return os.fdopen(_regular_fd(path), "r", encoding=encoding, newline=newline)


def read_regular(path: str | Path, *, follow: bool = True) -> bytes:
    """The bytes of a regular file (``open_regular``'s refusals); ``follow=False`` refuses a
    symbolic link too (a file of the user's own that someone may have swapped for a link)."""
    with os.fdopen(_regular_fd(path, follow=follow), "rb") as handle:
        return handle.read()


def read_regular_text(path: str | Path) -> str:
    """The UTF-8 text of a regular file (``open_regular``'s refusals; ``UnicodeDecodeError``)."""
    with open_regular_text(path) as handle:
        return handle.read()
