"""Keys issued, listed, revoked and rotated (admin API and `lethe tenant`); per-tenant limits; /metrics guarded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from config.settings import Settings
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.security.conftest import METRICS_TOKEN, Strict
from tests.support import eventually

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
LETHE = str(Path(sys.executable).parent / "lethe")


async def _works(http: httpx.AsyncClient, key: str) -> int:
    return (await http.get("/v1/memories/nothing", headers={"Authorization": f"Bearer {key}"})).status_code


async def test_keys_are_listed_by_prefix_revoked_and_rotated(http: httpx.AsyncClient) -> None:
    created = (await http.post("/v1/admin/tenants", json={"name": f"keys-{uuid.uuid4().hex}"}, headers=ADMIN)).json()
    tenant_id, first = created["tenant_id"], created["api_key"]
    second = (await http.post(f"/v1/admin/tenants/{tenant_id}/keys", headers=ADMIN)).json()
    assert await _works(http, first) == await _works(http, second["api_key"]) == 404  # known keys, no memory

    listed = (await http.get(f"/v1/admin/tenants/{tenant_id}/keys", headers=ADMIN)).json()
    assert [k["key_id"] for k in listed] == [created["key_id"], second["key_id"]]
    assert [k["prefix"] for k in listed] == [first[:12], second["api_key"][:12]]
    assert first not in str(listed) and second["api_key"] not in str(listed)

    revoked = await http.delete(f"/v1/admin/tenants/{tenant_id}/keys/{created['key_id']}", headers=ADMIN)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    rotated = await http.post(f"/v1/admin/tenants/{tenant_id}/keys/{second['key_id']}/rotate", headers=ADMIN)
    assert rotated.status_code == 201
    assert await _works(http, rotated.json()["api_key"]) == 404

    async def both_refused() -> bool:
        return await _works(http, first) == await _works(http, second["api_key"]) == 401

    await eventually(both_refused, timeout=7)  # the documented cache time is 5 s
    assert await _works(http, rotated.json()["api_key"]) == 404
    listed = (await http.get(f"/v1/admin/tenants/{tenant_id}/keys", headers=ADMIN)).json()
    assert [k["revoked_at"] is not None for k in listed] == [True, True, False]

    other = (await http.post("/v1/admin/tenants", json={"name": f"keys-{uuid.uuid4().hex}"}, headers=ADMIN)).json()
    # Another tenant's key id cannot be revoked through this tenant.
    cross = await http.delete(f"/v1/admin/tenants/{tenant_id}/keys/{other['key_id']}", headers=ADMIN)
    assert cross.status_code == 404
    assert await _works(http, other["api_key"]) == 404


def _lethe(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database.url, "LETHE_ENV": "development"}
    return subprocess.run([LETHE, *args], env=env, capture_output=True, text=True, timeout=60)


def _field(out: str, name: str) -> str:
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith(name + ": "))


async def test_lethe_tenant_manages_keys(settings: Settings, http: httpx.AsyncClient) -> None:
    made = _lethe(settings, "tenant", "create", f"cli-keys-{uuid.uuid4().hex}")
    assert made.returncode == 0, made.stderr
    tenant_id = made.stdout.split("(", 1)[1].split(")", 1)[0]
    key, key_id = _field(made.stdout, "api key"), _field(made.stdout, "key id")

    listed = _lethe(settings, "tenant", "keys", tenant_id)
    assert listed.returncode == 0 and key[:12] in listed.stdout and key not in listed.stdout

    rotated = _lethe(settings, "tenant", "rotate", tenant_id, key_id)
    assert rotated.returncode == 0, rotated.stderr
    assert await _works(http, _field(rotated.stdout, "api key")) == 404
    assert "revoked" in _lethe(settings, "tenant", "keys", tenant_id).stdout.splitlines()[0]

    missing = _lethe(settings, "tenant", "revoke", tenant_id, "999999999")
    assert missing.returncode == 1 and "no key" in missing.stderr


async def _tenant_on(client: httpx.AsyncClient) -> str:
    made = await client.post("/v1/admin/tenants", json={"name": f"limits-{uuid.uuid4().hex}"}, headers=ADMIN)
    return str(made.json()["api_key"])


async def test_a_tenant_over_its_rate_gets_429_and_others_do_not(strict: Strict) -> None:
    async with httpx.AsyncClient(base_url=strict.url, timeout=30) as client:
        busy, calm = await _tenant_on(client), await _tenant_on(client)
        statuses = [(await client.get("/v1/memories/x", headers={"Authorization": f"Bearer {busy}"}))
                    for _ in range(15)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited, [r.status_code for r in statuses]  # burst 10 at 5/s: 15 at once cannot all pass
        assert int(limited[0].headers["Retry-After"]) >= 1
        assert limited[0].json()["error"]["type"] == "rate_limited"
        assert (await client.get("/v1/memories/x", headers={"Authorization": f"Bearer {calm}"})).status_code == 404
        await asyncio.sleep(1.2)
        assert (await client.get("/v1/memories/x", headers={"Authorization": f"Bearer {busy}"})).status_code == 404


async def test_concurrent_decorates_over_the_cap_get_429(strict: Strict) -> None:
    async with httpx.AsyncClient(base_url=strict.url, timeout=60) as client:
        key = await _tenant_on(client)
        auth = {"Authorization": f"Bearer {key}"}
        # A heavy first call (a long transcript) keeps two decorates busy while more arrive.
        big = {"model": "m", "messages": [{"role": "user" if i % 2 == 0 else "assistant",
                                           "content": f"message {i} " * 400} for i in range(41)]}
        answers = await asyncio.gather(*(client.post(f"/v1/memories/c{i}/decorate", json=big, headers=auth)
                                         for i in range(6)))
        codes = sorted(r.status_code for r in answers)
        assert 200 in codes and 429 in codes, codes
        assert all(r.headers.get("Retry-After") for r in answers if r.status_code == 429)


async def test_metrics_live_on_their_own_port_behind_a_token(strict: Strict) -> None:
    async with httpx.AsyncClient(base_url=strict.url, timeout=30) as client:
        assert (await client.get("/metrics")).status_code == 404  # not on the public port
    port = strict.settings.gateway.metrics_port
    async with httpx.AsyncClient(timeout=30) as client:
        text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
    assert "lethe_http_requests_total" in text


async def test_metrics_token_guards_the_public_route(settings: Settings, worker: None) -> None:
    from pydantic import SecretStr

    from tests.support import free_port, serve_gateway

    guarded = settings.replace(port=free_port(), metrics_token=SecretStr(METRICS_TOKEN))
    async with serve_gateway(guarded) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        assert (await client.get("/metrics")).status_code == 401
        ok = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert ok.status_code == 200 and "lethe_http_requests_total" in ok.text
