"""A smaller ICU data library for the bundle: PySide6's ``libicudata`` without the trees Qt never reads.

PySide6's wheel links Qt to ICU 73, whose data library (31 MB) carries every ICU service's data.
Qt 6 asks ICU for collation (``QCollator``: ``coll/``), text boundaries (``brkitr/``), case
mapping and normalization (the main tree's ``.nrm``/``.icu`` files and locale ``.res`` for
fallback), time zone rules (``zoneinfo64``, ``metaZones``) and legacy text codecs
(``QStringDecoder`` on ICU: the ``.cnv`` converters); it takes language, territory and currency
names, number and date formats from its own CLDR tables. The trees below serve ICU's formatting
and display-name services only, which neither Qt nor the studio calls:

- ``unit/``, ``curr/``: measure-unit and currency display names (ICU's MeasureFormat, NumberFormatter)
- ``lang/``, ``region/``: language and territory display names (``uloc_getDisplayName``)
- ``zone/``: localized time zone names (ICU's TimeZoneNames; a lookup falls back to "GMT+01:00")
- ``translit/``: transliterators; ``rbnf/``: spelled-out numbers

``slim(src, dest)`` writes a ``libicudata.so.73`` with the same soname and data symbol
(``icudt73_dat``) holding the data package without those trees; ``packaging/grader-studio.spec``
collects it in place of the wheel's. It needs binutils' ``readelf`` (as the pruning does), ICU's
``icupkg`` (Debian: icu-devtools) and a C compiler driver to assemble the data into a library.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: the data trees nothing in the app reads (see the module docstring)
DROPPED_TREES = ("unit", "curr", "lang", "region", "zone", "translit", "rbnf")
#: the trees and items Qt does read: a slimmed package must still hold them
KEPT_TREES = ("coll", "brkitr")
KEPT_ITEMS = ("root.res", "res_index.res", "zoneinfo64.res", "metaZones.res", "uts46.nrm", "cnvalias.icu")
TOOLS = ("readelf", "icupkg", "cc")


class SlimError(RuntimeError):
    """The ICU data could not be slimmed (a tool is missing or the library is not ICU's)."""


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _data_symbol(lib: Path) -> tuple[str, int, int]:
    """(name, file offset, size) of the ``icudtNN_dat`` symbol holding the data package."""
    syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(lib)], capture_output=True, text=True,
                          check=True).stdout
    match = re.search(r":\s*([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+OBJECT\s+GLOBAL\s+\w+\s+(\d+)\s+(icudt\d+_dat)$",
                      syms, re.M)
    if match is None:
        raise SlimError(f"{lib} has no icudtNN_dat data symbol")
    value, size, section, name = int(match[1], 16), int(match[2], 0), int(match[3]), match[4]
    sections = subprocess.run(["readelf", "-S", "-W", str(lib)], capture_output=True, text=True,
                              check=True).stdout
    row = re.search(rf"\[\s*{section}\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", sections)
    if row is None:
        raise SlimError(f"{lib}: section {section} of {name} not found")
    address, offset = int(row[1], 16), int(row[2], 16)
    return name, value - address + offset, size


def _soname(lib: Path) -> str:
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    match = re.search(r"\(SONAME\)\s+Library soname: \[(.+)\]", dynamic)
    return match[1] if match else lib.name


def items(package: Path) -> list[str]:
    """The item names of an ICU data package (``icupkg -l``)."""
    out = subprocess.run(["icupkg", "-l", str(package)], capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def slim(src: Path, dest: Path) -> tuple[int, int]:
    """Write the slimmed library to ``dest``; returns (data bytes before, after)."""
    missing = missing_tools()
    if missing:
        raise SlimError(f"missing {', '.join(missing)}: install binutils, icu-devtools and gcc")
    name, offset, size = _data_symbol(src)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # icupkg wants the file named after the package its items live in (icudt73l/...)
        package = name.removesuffix("_dat") + ("l" if sys.byteorder == "little" else "b") + ".dat"
        (work / "in").mkdir()
        (work / "out").mkdir()
        full, small = work / "in" / package, work / "out" / package
        with src.open("rb") as lib:
            lib.seek(offset)
            full.write_bytes(lib.read(size))
        names = items(full)
        drop = [item for item in names if item.split("/", 1)[0] in DROPPED_TREES and "/" in item]
        (work / "drop.txt").write_text("\n".join(drop) + "\n")
        subprocess.run(["icupkg", "-r", str(work / "drop.txt"), str(full), str(small)], check=True,
                       capture_output=True)
        kept = set(items(small))
        lost = [item for item in KEPT_ITEMS if item not in kept]
        lost += [tree for tree in KEPT_TREES if not any(item.startswith(tree + "/") for item in kept)]
        if lost:
            raise SlimError(f"the slimmed ICU data lacks {', '.join(lost)}")
        asm = work / "data.S"
        asm.write_text(
            '\t.section .rodata\n\t.balign 16\n'
            f'\t.globl {name}\n\t.type {name}, @object\n{name}:\n'
            f'\t.incbin "{small}"\n\t.size {name}, .-{name}\n'
            '\t.section .note.GNU-stack,"",@progbits\n'
        )
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-shared", "-nostdlib", f"-Wl,-soname,{_soname(src)}", "-Wl,-z,noexecstack",
                        "-o", str(dest), str(asm)], check=True, capture_output=True)
        return size, small.stat().st_size


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: icu_slim.py SRC_LIBICUDATA DEST", file=sys.stderr)
        return 2
    before, after = slim(Path(argv[0]), Path(argv[1]))
    print(f"ICU data: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
