"""The client's base install needs neither framework: importing the package of integrations imports neither."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FRAMEWORKS = ("agents", "langgraph", "langchain_core", "openai")

PROBE = f"""
import json, sys
import lethe.client, lethe.integrations
print(json.dumps([m for m in {FRAMEWORKS!r} if m in sys.modules]))
"""


def test_importing_lethe_integrations_imports_no_framework() -> None:
    # A fresh interpreter: this test's own process has imported them all.
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_each_integration_imports_its_own_framework_only() -> None:
    probe = ("import json, sys, lethe.integrations.{name}; "
             "print(json.dumps([m for m in ('agents', 'langchain_core') if m in sys.modules]))")
    seen = {name: json.loads(subprocess.run([sys.executable, "-c", probe.format(name=name)], cwd=ROOT,
                                            capture_output=True, text=True, timeout=120, check=True).stdout)
            for name in ("agents", "langgraph")}
    # The LangGraph hooks need only LangChain's messages and runnables; the graph is the agent's own.
    assert seen == {"agents": ["agents"], "langgraph": ["langchain_core"]}
