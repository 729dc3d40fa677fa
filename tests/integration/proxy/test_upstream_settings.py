"""A tenant's stored upstream: set by `lethe tenant upstream`, its key encrypted at rest, used by the proxy."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
from openai import AsyncOpenAI
from sqlalchemy import select

from config.settings import Settings
from store.db import Database
from store.models import TenantUpstream
from tests.fake_upstream import FakeUpstream
from tests.integration.conftest import ADMIN_TOKEN

LETHE = str(Path(sys.executable).parent / "lethe")
KEY = "sk-cli-stored-key-9876543210"


def _lethe(settings: Settings, *args: str, stdin: str = "", secret: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database_url, "LETHE_ENV": "development",
           "LETHE_SECRET_KEY": secret}
    return subprocess.run([LETHE, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


async def test_cli_stores_an_encrypted_key_that_the_proxy_uses_after_a_rotation(
    settings: Settings, proxy_gateway: str, upstream: FakeUpstream, db: Database,
) -> None:
    name = "upstream-" + uuid.uuid4().hex[:8]
    async with httpx.AsyncClient(base_url=proxy_gateway) as gateway:
        created = (await gateway.post("/v1/admin/tenants", json={"name": name},
                                      headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})).json()
    # Sealed with the old secret; the gateway lists the new one first and the old one after, so it still opens.
    result = await asyncio.to_thread(_lethe, settings, "tenant", "upstream", name, "--base-url", upstream.base_url,
                                     "--api-key-stdin", stdin=KEY + "\n", secret="test-secret-old")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout and "…3210" in result.stdout
    async with db.session() as session:
        row = (await session.execute(select(TenantUpstream).where(
            TenantUpstream.tenant_id == created["tenant_id"]))).scalar_one()
    assert row.api_key_encrypted and KEY.encode() not in row.api_key_encrypted

    client = AsyncOpenAI(base_url=f"{proxy_gateway}/v1/m/stored-upstream", api_key=created["api_key"], max_retries=0)
    answer = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi there"}])
    assert answer.choices[0].message.content == "Noted: Hi there"
    assert upstream.headers[-1]["authorization"] == f"Bearer {KEY}"

    shown = await asyncio.to_thread(_lethe, settings, "tenant", "upstream", created["tenant_id"],
                                    secret="test-secret-old")
    assert shown.returncode == 0 and upstream.base_url in shown.stdout and KEY not in shown.stdout
    cleared = await asyncio.to_thread(_lethe, settings, "tenant", "upstream", name, "--clear",
                                      secret="test-secret-old")
    assert cleared.returncode == 0 and "cleared" in cleared.stdout, cleared.stderr
