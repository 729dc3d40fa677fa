"""Ceilings per model on the real gateway: a request is planned against the ceiling of the model it goes to (the
tenant's own, set through the admin API or `lethe tenant ceiling`, then the deployment's, then the model's known
window), and a bad change is refused naming the field, changing nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from config.settings import Settings
from tests.integration.conftest import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
LETHE = str(Path(sys.executable).parent / "lethe")


async def _ceiling(http: httpx.AsyncClient, key: str, model: str) -> int:
    memory = "ceil-" + uuid.uuid4().hex[:8]
    decorated = await http.post(f"/v1/memories/{memory}/decorate", headers={"Authorization": f"Bearer {key}"},
                                json={"model": model, "messages": [{"role": "user", "content": "hello"}]})
    assert decorated.status_code == 200, decorated.text
    return int(decorated.json()["budget"]["ceiling"])


async def _table(http: httpx.AsyncClient, tenant_id: str) -> dict[str, Any]:
    shown = await http.get(f"/v1/admin/tenants/{tenant_id}/ceilings", headers=ADMIN)
    assert shown.status_code == 200, shown.text
    return shown.json()["ceilings"]  # type: ignore[no-any-return]


async def test_a_request_is_planned_against_its_models_ceiling(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    tenant_id, key = tenant
    # The deployment's default (200k) for a model it knows nothing of; a smaller known window below it.
    assert await _ceiling(http, key, "house-model") == 200_000
    assert await _ceiling(http, key, "gpt-4o-mini-2024-07-18") == 128_000

    made = await http.put(f"/v1/admin/tenants/{tenant_id}/ceilings/gpt-4o-mini", headers=ADMIN,
                          json={"ceiling_tokens": 6000})
    assert made.status_code == 200, made.text
    assert made.json() == {"tenant_id": tenant_id, "ceilings": {"gpt-4o-mini": 6000}}
    assert await _ceiling(http, key, "gpt-4o-mini-2024-07-18") == 6000
    assert await _ceiling(http, key, "gpt-4o") == 128_000           # another family is untouched
    assert await _ceiling(http, other_tenant[1], "gpt-4o-mini") == 128_000  # so is another tenant

    # A router's model name with a slash is one path.
    routed = await http.put(f"/v1/admin/tenants/{tenant_id}/ceilings/acme/house-model", headers=ADMIN,
                            json={"ceiling_tokens": 32_000})
    assert routed.status_code == 200, routed.text
    assert await _ceiling(http, key, "acme/house-model") == 32_000

    cleared = await http.delete(f"/v1/admin/tenants/{tenant_id}/ceilings/gpt-4o-mini", headers=ADMIN)
    assert cleared.status_code == 200 and cleared.json()["ceilings"] == {"acme/house-model": 32_000}
    assert await _ceiling(http, key, "gpt-4o-mini") == 128_000


async def test_bad_ceiling_changes_are_refused_and_change_nothing(
    http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    tenant_id, key = tenant
    base = f"/v1/admin/tenants/{tenant_id}/ceilings"
    assert (await http.put(f"{base}/m", headers=ADMIN, json={"ceiling_tokens": 50_000})).status_code == 200
    for body in ({"ceiling_tokens": 12}, {"ceiling_tokens": "lots"}, {"ceiling_tokens": 10**12}, {}):
        refused = await http.put(f"{base}/m", headers=ADMIN, json=body)
        assert refused.status_code == 422, (body, refused.text)
        assert "ceiling_tokens" in refused.text
    assert (await http.put(f"{base}/m", headers={"Authorization": f"Bearer {key}"},
                           json={"ceiling_tokens": 9000})).status_code == 401  # a tenant's key is not the admin's
    assert (await http.put("/v1/admin/tenants/t_nobody/ceilings/m", headers=ADMIN,
                           json={"ceiling_tokens": 9000})).status_code == 404
    missing = await http.delete(f"{base}/other-model", headers=ADMIN)
    assert missing.status_code == 404 and "other-model" in missing.text
    assert await _table(http, tenant_id) == {"m": 50_000}
    assert await _ceiling(http, key, "m") == 50_000


async def test_lethe_tenant_ceiling_sets_shows_and_clears(
    settings: Settings, http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    tenant_id, _ = tenant
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database.url, "LETHE_ENV": "development"}

    def lethe(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([LETHE, "tenant", "ceiling", tenant_id, *args], env=env, capture_output=True,
                              text=True, timeout=60)

    made = lethe("gpt-4o", "16000")
    assert made.returncode == 0, made.stderr
    assert "gpt-4o\t16000" in made.stdout
    assert await _table(http, tenant_id) == {"gpt-4o": 16_000}
    assert "gpt-4o\t16000" in lethe().stdout
    refused = lethe("gpt-4o", "10")
    assert refused.returncode == 1 and "ceiling_tokens" in refused.stderr
    assert lethe("gpt-4o", "--clear").returncode == 0
    assert await _table(http, tenant_id) == {}
