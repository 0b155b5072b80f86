"""Two steps of ``packaging/build`` on the built folder.

``dedupe DIR``: identical files become hard links of one another. The worker's folder repeats the
interpreter and the standard library's extension modules of the app's (it is mounted alone in the
sandbox, so it cannot point into the app's folder), and some wheels ship the same runtime library
twice; a hard link costs no space, survives the tarball, and a bind mount follows it.

``fixelf DIR``: the shared libraries PyInstaller's ``strip`` left unloadable become loadable again.
Wheels repaired by a recent auditwheel (numpy 2.4's and scipy 1.17's OpenBLAS and gfortran) carry
extra PT_LOAD segments patchelf added; ``strip`` empties them (no bytes in the file, none in
memory) but leaves their file offset out of step with their address, and glibc refuses the whole
library ("ELF load command address/offset not page-aligned"). An empty segment maps nothing, so it
becomes PT_NULL, which the loader skips; every other segment keeps its bytes and place.

``report DIR``: the folder's size (each file counted once) and the parts that take it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
from collections import Counter
from pathlib import Path

MB = 1024 * 1024


def dedupe(root: Path) -> int:
    """Hard-link identical regular files under ``root``; returns the bytes saved."""
    by_size: dict[int, list[Path]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.stat().st_size > 4096:
            by_size.setdefault(path.stat().st_size, []).append(path)
    saved = 0
    for size, paths in by_size.items():
        if len(paths) < 2:
            continue
        first: dict[str, Path] = {}
        for path in paths:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            original = first.setdefault(digest, path)
            if original is path or os.path.samefile(original, path):
                continue
            if original.stat().st_mode != path.stat().st_mode:
                continue
            temp = path.with_name(path.name + ".link")
            os.link(original, temp)
            os.replace(temp, path)
            saved += size
    return saved


PT_NULL, PT_LOAD = 0, 1


def misaligned_empty_loads(data: bytes) -> list[int]:
    """Offsets (in ``data``, a 64-bit little-endian ELF file) of the program headers of empty PT_LOAD
    segments whose file offset and address disagree modulo their alignment."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    found = []
    for i in range(phnum):
        at = phoff + i * phentsize
        kind, _flags, offset, vaddr, _paddr, filesz, memsz, align = struct.unpack_from("<IIQQQQQQ", data, at)
        if kind == PT_LOAD and filesz == 0 and memsz == 0 and align > 1 and (vaddr - offset) % align:
            found.append(at)
    return found


def fix_elf(root: Path) -> list[Path]:
    """Turn the misaligned empty PT_LOAD segments of every ELF file under ``root`` into PT_NULL;
    returns the files changed."""
    changed = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        with path.open("rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
        data = bytearray(path.read_bytes())
        headers = misaligned_empty_loads(bytes(data))
        if not headers:
            continue
        for at in headers:
            struct.pack_into("<I", data, at, PT_NULL)
        path.write_bytes(bytes(data))
        changed.append(path)
    return changed


def sizes(root: Path) -> tuple[int, Counter[str]]:
    """(total bytes, bytes per part); a hard-linked file counts once, for the first part met."""
    seen: set[tuple[int, int]] = set()
    parts: Counter[str] = Counter()
    total = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        st = path.stat()
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        rel = path.relative_to(root).parts
        if rel[0] == "_internal" and len(rel) > 2:
            part = "/".join(rel[1:3] if rel[1] == "PySide6" and len(rel) > 3 else rel[1:2])
        elif rel[0] == "_internal":
            part = "shared libraries (_internal/*.so*)" if ".so" in rel[1] else "_internal/" + rel[1]
        elif rel[0] == "worker":
            part = "worker (its own files)"
        else:
            part = rel[0]
        parts[part] += st.st_size
        total += st.st_size
    return total, parts


def report(root: Path, top: int = 14) -> str:
    total, parts = sizes(root)
    lines = [f"{total / MB:7.1f}  total, unpacked (hard links counted once)"]
    for part, size in parts.most_common(top):
        lines.append(f"{size / MB:7.1f}  {part}")
    rest = total - sum(size for _part, size in parts.most_common(top))
    lines.append(f"{rest / MB:7.1f}  everything else")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("dedupe", "fixelf", "report"):
        print("usage: bundle_files.py dedupe|fixelf|report DIR", file=sys.stderr)
        return 2
    root = Path(argv[1])
    if argv[0] == "fixelf":
        changed = fix_elf(root)
        print(f"empty misaligned ELF segments dropped from {len(changed)} stripped libraries:"
              f" {', '.join(p.name for p in changed) or 'none'}")
    elif argv[0] == "dedupe":
        print(f"hard-linked identical files: {dedupe(root) / MB:.1f} MB saved")
    else:
        print(report(root))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
