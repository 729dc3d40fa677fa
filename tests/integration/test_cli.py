"""The `lethe` command against the test session's Postgres and Temporal."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from config.settings import Settings
from tests.integration.conftest import ADMIN_TOKEN

LETHE = str(Path(sys.executable).parent / "lethe")


def _run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database.url,
           "LETHE_TEMPORAL_ADDRESS": settings.temporal.address, "LETHE_ENV": "development"}
    return subprocess.run([LETHE, *args], env=env, capture_output=True, text=True, timeout=60)


async def test_tenant_create_prints_a_key_the_gateway_accepts(settings: Settings, http: httpx.AsyncClient) -> None:
    name = "cli-" + uuid.uuid4().hex
    result = _run(settings, "tenant", "create", name)
    assert result.returncode == 0, result.stderr
    key = next(line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("api key: "))
    response = await http.post("/v1/memories/cli/decorate", headers={"Authorization": f"Bearer {key}"},
                               json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200

    again = _run(settings, "tenant", "create", name)
    assert again.returncode == 1
    assert again.stderr.strip() == f"error: a tenant named {name!r} already exists"


def test_migrate_and_search_attribute_registration_are_idempotent(settings: Settings) -> None:
    migrated = _run(settings, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    registered = _run(settings, "register-search-attributes")
    assert registered.returncode == 0, registered.stderr
    assert "nothing new" in registered.stdout


async def test_metrics_count_requests_by_route(http: httpx.AsyncClient) -> None:
    await http.get("/healthz")
    text = (await http.get("/metrics")).text
    assert 'lethe_http_requests_total{method="GET",route="/healthz",status="200"}' in text


async def test_tenant_profile_shows_and_sets_what_feeds_users_graphs(
    settings: Settings, http: httpx.AsyncClient, tenant: tuple[str, str],
) -> None:
    tenant_id, _ = tenant
    shown = _run(settings, "tenant", "profile", tenant_id)
    assert shown.returncode == 0, shown.stderr
    assert "assistant\tmuted" in shown.stdout and "user\tfeeds" in shown.stdout

    bad = _run(settings, "tenant", "profile", tenant_id, "asistant=on")
    assert bad.returncode == 1 and "profile.asistant" in bad.stderr
    bad = _run(settings, "tenant", "profile", tenant_id, "assistant=yes")
    assert bad.returncode == 1 and "assistant=yes" in bad.stderr

    changed = _run(settings, "tenant", "profile", tenant_id, "assistant=on", "agent:triage=off")
    assert changed.returncode == 0, changed.stderr
    assert "assistant\tfeeds" in changed.stdout and "agent:triage\tmuted" in changed.stdout
    # The gateway's admin API reads the same profile.
    api = await http.get(f"/v1/admin/tenants/{tenant_id}/profile", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert api.json()["profile"]["assistant"] is True
    back = _run(settings, "tenant", "profile", tenant_id, "assistant=default")
    assert "assistant\tmuted" in back.stdout
