"""packaging/bundle_files.py's ``fixelf``: a library PyInstaller stripped loads again.

Stripping the OpenBLAS and gfortran of numpy 2.4's and scipy 1.17's wheels (auditwheel-repaired
with extra PT_LOAD segments) leaves empty segments whose offset and address disagree, and glibc
refuses the library, so the bundle could not import numpy. These checks strip a real wheel library
the way the build does and load it, and pin what the fix may change in a synthetic ELF header.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("packaging_bundle_files", REPO / "packaging" / "bundle_files.py")
assert spec is not None and spec.loader is not None
bundle_files = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bundle_files)


def _elf(loads: list[tuple[int, int, int, int]]) -> bytes:
    """A 64-bit little-endian ELF header followed by PT_LOAD headers (offset, vaddr, filesz, memsz)."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 32, 64)
    struct.pack_into("<HH", header, 54, 56, len(loads))
    for offset, vaddr, filesz, memsz in loads:
        header += struct.pack("<IIQQQQQQ", bundle_files.PT_LOAD, 6, offset, vaddr, vaddr, filesz, memsz, 0x1000)
    return bytes(header)


def test_only_empty_misaligned_loads_become_null(tmp_path: Path) -> None:
    loads = [(0, 0, 0x2000, 0x2000), (0x1621098, 0x166B000, 0, 0), (0x1622000, 0x16E1000, 0x1F0, 0x1F0),
             (0x1621098, 0x16A6000, 0x10, 0x10)]  # the last is misaligned but not empty: not ours to touch
    lib = tmp_path / "lib.so"
    lib.write_bytes(_elf(loads))
    (tmp_path / "text.txt").write_text("not an ELF file")
    assert bundle_files.fix_elf(tmp_path) == [lib]
    data = lib.read_bytes()
    kinds = [struct.unpack_from("<I", data, 64 + i * 56)[0] for i in range(len(loads))]
    assert kinds == [bundle_files.PT_LOAD, bundle_files.PT_NULL, bundle_files.PT_LOAD, bundle_files.PT_LOAD]
    assert data[64 + 56 + 4:] == _elf(loads)[64 + 56 + 4:]  # nothing else changes
    assert bundle_files.fix_elf(tmp_path) == []  # idempotent


def test_a_stripped_wheel_library_loads_after_the_fix(tmp_path: Path) -> None:
    if shutil.which("strip") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("strip (binutils) is missing: packaging/build needs it")
        pytest.skip("strip (binutils) is not installed")
    import numpy

    libs = Path(numpy.__file__).parent.parent / "numpy.libs"
    gfortran = sorted(libs.glob("libgfortran*"))
    if not gfortran:
        pytest.skip(f"this numpy wheel has no libgfortran in {libs}")
    for lib in libs.glob("lib*"):
        if "openblas" not in lib.name:
            shutil.copy2(lib, tmp_path / lib.name)
    target = tmp_path / gfortran[0].name
    subprocess.run(["strip", str(target)], check=True)
    bundle_files.fix_elf(tmp_path)
    assert bundle_files.misaligned_empty_loads(target.read_bytes()) == []
    ctypes.CDLL(str(target))  # glibc accepts it (raises OSError otherwise)
