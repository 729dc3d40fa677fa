"""Schemathesis over the published OpenAPI document, bounded (examples and coverage phases): no server error,
no answer outside its schema, no status the document does not declare. `make fuzz` runs the long version."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.fake_upstream import FakeUpstream
from tests.integration.conftest import ADMIN_TOKEN

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "response_schema_conformance",
    "content_type_conformance", "response_headers_conformance", "missing_required_header", "unsupported_method",
    "ignored_auth",
])

UPSTREAM_UNREACHABLE = '[checks.not_a_server_error]\nexpected-statuses = ["2xx", "3xx", "4xx", "502", "504"]\n'


async def fuzz(url: str, authorization: str, *, include: str, max_examples: int = 10, max_time: int = 25,
               checks: str = CHECKS, headers: tuple[str, ...] = (), config: str = "") -> str:
    schemathesis = Path(sys.executable).parent / "schemathesis"
    sent = [flag for header in (f"Authorization: {authorization}", *headers) for flag in ("-H", header)]
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as toml:
        toml.write(config)
    process = await asyncio.create_subprocess_exec(
        str(schemathesis), "--config-file", toml.name, "run", f"{url}/openapi.json", "--phases", "examples,coverage",
        "--checks", checks, *sent, "--include-path-regex", include,
        "--max-examples", str(max_examples), "--max-time", str(max_time), "--request-timeout", "20",
        "--generation-deterministic", "--no-color", "--continue-on-failure", "--suppress-health-check", "all",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        cwd=tempfile.gettempdir(),  # its cache of crashes stays out of the work tree
    )
    out, _ = await process.communicate()
    Path(toml.name).unlink()
    text = out.decode(errors="replace")
    assert process.returncode == 0, text[-6000:]
    return text


async def test_schemathesis_finds_nothing_on_memories(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    await fuzz(str(http.base_url).rstrip("/"), f"Bearer {tenant[1]}",
               include="^/(v1/memories|v1/users|healthz|readyz)")


async def test_schemathesis_finds_nothing_on_admin(http: httpx.AsyncClient) -> None:
    await fuzz(str(http.base_url).rstrip("/"), f"Bearer {ADMIN_TOKEN}", include="^/v1/admin", max_time=15)


def _ahead() -> str:
    return (datetime.now(UTC) + timedelta(hours=1)).isoformat(timespec="seconds").replace("+00:00", "Z")


async def test_schemathesis_sees_every_schema_valid_request_accepted(
    http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    # What the document allows is taken: no 4xx for a reason it does not state (cursor and time formats are
    # patterns in it). X-Lethe-Now is sent fixed: schemathesis 4's coverage phase offers "0" as a valid value
    # for any header whose pattern needs a character other than a letter or digit (an RFC 3339 time needs
    # `-` and `:`), so it is checked by the malformed-request table instead.
    # An hour ahead: never before a time the memory already holds (an earlier run's calls at server time
    # within this very second would make a time truncated to the second go backwards, a 422).
    # Import is left out: its body is an export, whose rows point at each other (a fact at its note call, an
    # alias at its entity) in ways a JSON Schema cannot state; tests/integration/facts/test_import.py checks it.
    now = _ahead()
    await fuzz(str(http.base_url).rstrip("/"), f"Bearer {tenant[1]}", include="^/v1/(memories|users)(?!.*/import$)",
               checks="positive_data_acceptance,not_a_server_error", headers=(f"X-Lethe-Now: {now}",))


async def test_schemathesis_finds_nothing_on_the_proxy(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str]
) -> None:
    # The tenant's stored upstream is the local one, so schema-valid requests reach a model and come back.
    async with httpx.AsyncClient(base_url=proxy_gateway) as admin:
        stored = await admin.put(f"/v1/admin/tenants/{tenant[0]}/upstream", headers={
            "Authorization": f"Bearer {ADMIN_TOKEN}"}, json={"base_url": upstream.base_url, "api_key": "sk-fuzz"})
        assert stored.status_code == 200, stored.text
    include = "^/v1/(chat/|responses|m/)"
    # An upstream URL the document allows may name no server that answers: the proxy's 502 (and 504 for one
    # that hangs) are documented answers then, not server errors of Lethe's.
    await fuzz(proxy_gateway, f"Bearer {tenant[1]}", include=include, max_time=12, config=UPSTREAM_UNREACHABLE)
    # Headers whose patterns need `:` or `/` are sent fixed, for the reason given above.
    # An hour ahead: never before a time the memory already holds (an earlier run's calls at server time
    # within this very second would make a time truncated to the second go backwards, a 422).
    now = _ahead()
    await fuzz(proxy_gateway, f"Bearer {tenant[1]}", include=include, max_time=12,
               checks="positive_data_acceptance,not_a_server_error",
               headers=(f"X-Lethe-Now: {now}", f"X-Lethe-Upstream-Base-URL: {upstream.base_url}"),
               config=UPSTREAM_UNREACHABLE)
