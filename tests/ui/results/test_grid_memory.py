"""The grid's memory: a block of a megabyte or more (an id load's JSON text, its array) is mapped alone
once a results model exists, so freeing it gives it back; glibc's dynamic threshold would keep it."""

from __future__ import annotations

import platform
import subprocess
import sys

from studio.ui.results.model import BIG_BLOCK_BYTES, _big_blocks_unmapped

CHILD = r"""
import ctypes, sys
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
from studio.ui.results.model import BIG_BLOCK_BYTES, _big_blocks_unmapped
if sys.argv[1] == "fixed":
    assert _big_blocks_unmapped()
big = bytearray(16 << 20)  # freed: glibc's dynamic threshold rises to 16 MB
del big
before = libc.mallinfo2().hblkhd
block = bytearray(4 * BIG_BLOCK_BYTES)
print(libc.mallinfo2().hblkhd - before >= 4 * BIG_BLOCK_BYTES)
"""


def mapped_alone(mode: str) -> bool:
    out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_a_big_block_freed_goes_back_to_the_system_once_a_model_exists() -> None:
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert _big_blocks_unmapped() is glibc
    if glibc:
        assert BIG_BLOCK_BYTES <= 1 << 20
        assert not mapped_alone("default")  # what every sort did: the next big block from the heap
        assert mapped_alone("fixed")
