from __future__ import annotations

import ast
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[3] / "engine"


def outside_imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                continue  # relative imports stay inside engine
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top != "engine" and top not in sys.stdlib_module_names:
                found.append(f"{path.relative_to(ENGINE.parent)}: {name}")
    return found


def test_engine_imports_only_the_standard_library() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert files
    assert [bad for path in files for bad in outside_imports(path)] == []


def test_outside_imports_catches_a_third_party_import(tmp_path: Path) -> None:
    sample = ENGINE / "__init__.py"
    assert outside_imports(sample) == []
    probe = ENGINE.parent / "engine" / "_probe_does_not_exist.py"
    assert not probe.exists()
    tree = ast.parse("import numpy\nfrom sqlalchemy import orm\nimport json\nfrom engine.units import Unit\n")
    tops = [
        (n.names[0].name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    assert [t for t in tops if t != "engine" and t not in sys.stdlib_module_names] == ["numpy", "sqlalchemy"]
