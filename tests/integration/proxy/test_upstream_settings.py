"""A tenant's stored upstream: set by `lethe tenant upstream`, its key encrypted at rest, used by the proxy."""

from __future__ import annotations

import io
import uuid

import httpx
import pytest
from openai import AsyncOpenAI
from sqlalchemy import select

from cli import upstream as upstream_command
from cli.main import _parser
from config.settings import Settings
from store.db import Database
from store.models import TenantUpstreamRow
from tests.fake_upstream import FakeUpstream
from tests.integration.conftest import ADMIN_TOKEN

KEY = "sk-cli-stored-key-9876543210"


async def _lethe(settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                 *args: str, stdin: str = "") -> str:
    """`lethe tenant upstream ...` as the command parses and runs it (in-process: a fresh interpreter per call
    costs seconds); its output."""
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    capsys.readouterr()
    assert await upstream_command.run(settings, _parser().parse_args(["tenant", "upstream", *args])) == 0
    return capsys.readouterr().out


async def test_cli_stores_an_encrypted_key_that_the_proxy_uses_after_a_rotation(
    settings: Settings, proxy_gateway: str, upstream: FakeUpstream, db: Database,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Sealed with the old secret; the gateway lists the new one first and the old one after, so it still opens.
    old = settings.replace(secret_key=settings.gateway.secret_key.__class__("test-secret-old"))
    name = "upstream-" + uuid.uuid4().hex[:8]
    async with httpx.AsyncClient(base_url=proxy_gateway) as gateway:
        created = (await gateway.post("/v1/admin/tenants", json={"name": name},
                                      headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})).json()
    out = await _lethe(old, capsys, monkeypatch, name, "--base-url", upstream.base_url, "--api-key-stdin",
                       stdin=KEY + "\n")
    assert KEY not in out and "…3210" in out
    async with db.session() as session:
        row = (await session.execute(select(TenantUpstreamRow).where(
            TenantUpstreamRow.tenant_id == created["tenant_id"]))).scalar_one()
    assert row.api_key_encrypted and KEY.encode() not in row.api_key_encrypted

    client = AsyncOpenAI(base_url=f"{proxy_gateway}/v1/m/stored-upstream", api_key=created["api_key"], max_retries=0)
    answer = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi there"}])
    assert answer.choices[0].message.content == "Noted: Hi there"
    assert upstream.headers[-1]["authorization"] == f"Bearer {KEY}"

    shown = await _lethe(old, capsys, monkeypatch, created["tenant_id"])
    assert upstream.base_url in shown and KEY not in shown
    assert "cleared" in await _lethe(old, capsys, monkeypatch, name, "--clear")
