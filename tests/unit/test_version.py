"""A version a user can print, the same everywhere: the package's, `lethe --version`, the gateway's health and
its OpenAPI document; the CHANGELOG has an entry for it; the license is Apache-2.0."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from fastapi.testclient import TestClient

from api.routes.health import router
from contracts.version import VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_every_place_says_the_installed_version() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert VERSION == declared
    printed = subprocess.run([str(Path(sys.executable).parent / "lethe"), "--version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert printed == f"lethe {declared}"
    from fastapi import FastAPI

    app = FastAPI()
    app.include_router(router)
    answer = TestClient(app).get("/v1/health")
    assert answer.status_code == 200 and answer.json() == {"status": "ok", "version": declared}
    assert f"## {declared}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_license_is_apache_2() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
