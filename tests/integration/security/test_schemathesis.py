"""Schemathesis over the published OpenAPI document, bounded (examples and coverage phases): no server error,
no answer outside its schema, no status the document does not declare. `make fuzz` runs the long version."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import httpx

from tests.integration.conftest import ADMIN_TOKEN

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "response_schema_conformance",
    "content_type_conformance", "response_headers_conformance", "missing_required_header", "unsupported_method",
    "ignored_auth",
])


async def fuzz(url: str, authorization: str, *, include: str, max_examples: int = 10, max_time: int = 25) -> str:
    schemathesis = Path(sys.executable).parent / "schemathesis"
    process = await asyncio.create_subprocess_exec(
        str(schemathesis), "run", f"{url}/openapi.json", "--phases", "examples,coverage",
        "--checks", CHECKS, "-H", f"Authorization: {authorization}", "--include-path-regex", include,
        "--max-examples", str(max_examples), "--max-time", str(max_time), "--request-timeout", "20",
        "--generation-deterministic", "--no-color", "--continue-on-failure", "--suppress-health-check", "all",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        cwd=tempfile.gettempdir(),  # its cache of crashes stays out of the work tree
    )
    out, _ = await process.communicate()
    text = out.decode(errors="replace")
    assert process.returncode == 0, text[-6000:]
    return text


async def test_schemathesis_finds_nothing_on_memories(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    await fuzz(str(http.base_url).rstrip("/"), f"Bearer {tenant[1]}", include="^/(v1/memories|healthz|readyz)")


async def test_schemathesis_finds_nothing_on_admin(http: httpx.AsyncClient) -> None:
    await fuzz(str(http.base_url).rstrip("/"), f"Bearer {ADMIN_TOKEN}", include="^/v1/admin", max_time=15)
