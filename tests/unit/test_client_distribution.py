"""The Python client is a distribution of its own (client/, `lethe-gateway-client`): the server's version, its
own small set of dependencies, and the server's wheel and image take it from there, never a copy of their own.
tests/integration/test_client_installed_alone.py installs it alone and runs it against the gateway."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = tomllib.loads((ROOT / "pyproject.toml").read_text())
CLIENT = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())
LOCK = {p["name"]: p for p in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _locked_closure(name: str) -> set[str]:
    seen: set[str] = set()
    todo = [dep["name"] for dep in LOCK[name].get("dependencies", [])]
    while todo:
        if (next_name := todo.pop()) not in seen:
            seen.add(next_name)
            todo += [dep["name"] for dep in LOCK[next_name].get("dependencies", [])]
    return seen


def test_the_client_has_the_servers_version_and_the_server_requires_exactly_it() -> None:
    version = SERVER["project"]["version"]
    assert CLIENT["project"]["name"] == "lethe-gateway-client" and CLIENT["project"]["version"] == version
    assert f"lethe-gateway-client=={version}" in SERVER["project"]["dependencies"]
    assert LOCK["lethe-gateway-client"]["version"] == version
    assert importlib.metadata.version("lethe-gateway-client") == version, "the venv is behind: make test syncs it"
    # The wheel and sdist carry the license from client/ (a distribution cannot reach a file above its folder).
    assert (ROOT / "client" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()


def test_the_client_needs_nothing_of_the_server() -> None:
    assert sorted(_name(r) for r in CLIENT["project"]["dependencies"]) == ["httpx", "pydantic"]
    # What installing the client pulls in, as locked, shares with the server's own requirements only those two.
    server = {_name(r) for r in SERVER["project"]["dependencies"]}
    assert _locked_closure("lethe-gateway-client") & server == {"httpx", "pydantic"}
    assert not {"temporalio", "sqlalchemy", "onnxruntime", "fastapi", "openai"} & _locked_closure(
        "lethe-gateway-client")


def test_every_import_of_the_client_is_one_of_its_dependencies() -> None:
    distributions = importlib.metadata.packages_distributions()
    base = {_name(r) for r in CLIENT["project"]["dependencies"]}
    extras = CLIENT["project"]["optional-dependencies"]
    undeclared = {}
    for path in (ROOT / "client" / "lethe").rglob("*.py"):
        # An integration (lethe/integrations/agents.py) may import its extra's packages, and only those.
        extra = extras.get(path.stem, []) if path.parent.name == "integrations" else []
        declared = base | {_name(r) for r in extra}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for top in {module.split(".")[0] for module in modules} - sys.stdlib_module_names - {"__future__", "lethe"}:
                if not {_name(d) for d in distributions.get(top, [])} & declared:
                    undeclared[top] = str(path.relative_to(ROOT))
    assert undeclared == {}


def test_the_server_ships_no_copy_and_its_image_builds_the_client() -> None:
    assert not (ROOT / "lethe").exists()
    assert not [p for p in SERVER["tool"]["setuptools"]["packages"]["find"]["include"] if p.startswith("lethe")]
    assert SERVER["tool"]["uv"]["workspace"]["members"] == ["client"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    # The client's pyproject.toml before the first sync (uv checks the lock against it), its sources before the last.
    first_sync = dockerfile.index("RUN uv sync")
    assert "COPY client/pyproject.toml" in dockerfile[:first_sync] and "COPY client/ client/" in dockerfile
    assert "--no-install-workspace" in dockerfile[first_sync:].splitlines()[0]
    assert "!client" in (ROOT / ".dockerignore").read_text().splitlines()
