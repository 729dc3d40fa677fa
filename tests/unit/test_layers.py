"""The layers of DESIGN.md, enforced: each top-level package imports only what its row allows."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = {"contracts", "engine", "store", "providers", "recall", "activities", "workflows", "service", "api", "cli",
           "config", "lethe"}
# Where each package's sources are: the client is a distribution of its own, under client/.
SOURCES = {package: ROOT / package for package in PROJECT} | {"lethe": ROOT / "client" / "lethe"}
# The table of docs/architecture.md. `config` is the settings' types: only `cli` reads the environment with them,
# and hands their groups whole to the service and the gateway.
ALLOWED = {
    "contracts": set(),
    "engine": {"contracts"},
    "store": {"contracts", "engine"},
    "providers": {"contracts", "engine"},
    # Recall's find, walk and distill: the gateway's use cases and the lane's activities call it.
    "recall": {"contracts", "engine", "store", "providers"},
    "activities": {"contracts", "engine", "store", "providers", "recall"},
    "workflows": {"contracts", "engine"},
    "service": {"contracts", "engine", "store", "providers", "recall", "config"},
    # HTTP only: everything it serves is a use case of `service`.
    "api": {"contracts", "config", "service"},
    "cli": PROJECT,
    "config": {"contracts", "engine"},
    "lethe": set(),  # the client library agents install: nothing else of the project
}


def _modules(source: str) -> list[str]:
    """Every module a source imports, by absolute name (relative imports stay inside their package)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _imports(package: str) -> list[tuple[Path, str]]:
    return [(path, module) for path in SOURCES[package].rglob("*.py") for module in _modules(path.read_text())]


def test_the_checker_sees_imports_at_any_depth() -> None:
    source = "import numpy\nfrom sqlalchemy import orm\ndef f():\n    from store.db import Database\n"
    assert _modules(source) == ["numpy", "sqlalchemy", "store.db"]


@pytest.mark.parametrize("package", ["contracts", "engine"])
def test_engine_and_contracts_import_only_the_standard_library(package: str) -> None:
    outside = [(str(p.relative_to(ROOT)), m) for p, m in _imports(package)
               if m.split(".")[0] not in sys.stdlib_module_names | {"__future__", "contracts", "engine"}]
    assert outside == []


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_its_allowed_layers(package: str) -> None:
    allowed = ALLOWED[package] | {package}
    wrong = [(str(p.relative_to(ROOT)), m) for p, m in _imports(package)
             if m.split(".")[0] in PROJECT and m.split(".")[0] not in allowed]
    assert wrong == []


def test_the_table_covers_every_top_level_package() -> None:
    packages = {path.parent.name for glob in ("*/__init__.py", "client/*/__init__.py") for path in ROOT.glob(glob)}
    assert packages == PROJECT


def test_no_workflow_module_imports_the_workflow_it_serves() -> None:
    # The workflow imports its helpers; a helper importing the workflow back is a cycle.
    back = [str(p.relative_to(ROOT)) for p, m in _imports("workflows") if m == "workflows.memory"]
    assert back == []


# Third-party libraries that belong to one layer: who may import each (a package, or one module by its path).
OWNERS = {
    "sqlalchemy": {"store"},
    "alembic": {"store"},
    "asyncpg": {"store"},
    "pgvector": {"store"},
    "fastapi": {"api"},
    "starlette": {"api"},
    # The workflow, its activities, the command that runs them, and the gateway's one seam to Temporal.
    "temporalio": {"workflows", "activities", "cli", "service/relay.py"},
    "openai": {"providers"},
    "onnxruntime": {"providers"},
    "pydantic_settings": {"config"},
    # The MCP server is a command over the client: nothing else speaks MCP.
    "mcp": {"cli"},
}


@pytest.mark.parametrize("library", sorted(OWNERS))
def test_each_library_is_imported_only_by_its_layer(library: str) -> None:
    owners = OWNERS[library]
    wrong = []
    for package in sorted(PROJECT):
        for path, module in _imports(package):
            where = str(path.relative_to(ROOT))
            if module.split(".")[0] == library and package not in owners and where not in owners:
                wrong.append((where, module))
    assert wrong == []
