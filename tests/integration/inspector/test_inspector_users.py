"""The inspector's users in headless Chromium: a tenant's users, one user's graph with the conversation each fact
came from (a link that opens it), and the per-source profile in force; another tenant's users never show."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page

from store.db import Database
from tests.integration.graph.graph_support import write_note
from tests.integration.inspector.browser import SCREENSHOTS, chromium
from tests.integration.inspector.conftest import _tenant
from tests.support import eventually

SAID = {"note": "Mira's sailing course starts on 3 July.", "subject": "Mira's sailing course",
        "object": "3 July", "source": "user"}


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    async with chromium() as running:
        yield running


async def _user_with_a_fact(http: httpx.AsyncClient, db: Database, prefix: str, user: str) -> tuple[str, str]:
    tenant_id, key = await _tenant(http, prefix)
    auth = {"Authorization": f"Bearer {key}"}
    decorated = await http.post(f"/v1/memories/{user}-chat/decorate", headers={**auth, "X-Lethe-User": user},
                                json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi!"}]})
    assert decorated.status_code == 200, decorated.text
    await write_note(db, tenant_id, f"{user}-chat", "n1", [SAID], datetime(2026, 6, 1, tzinfo=UTC))

    async def fed() -> list[dict[str, Any]] | None:
        facts = (await http.get(f"/v1/users/{user}/facts", headers=auth)).json().get("facts", [])
        return facts if facts and all(f["integrated_at"] for f in facts) else None

    await eventually(fed, timeout=90)
    return tenant_id, key


async def test_a_users_graph_shows_where_each_fact_came_from_and_what_feeds_it(
    browser: Browser, inspect_gateway: str, db: Database,
) -> None:
    async with httpx.AsyncClient(base_url=inspect_gateway, timeout=60) as http:
        _, key = await _user_with_a_fact(http, db, "inspect-users", "mira")
        await _user_with_a_fact(http, db, "inspect-users-other", "someone-else")
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page: Page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(f"{inspect_gateway}/inspect")
    await page.fill("#api-key", key)
    await page.click("#signin-form button[type=submit]")
    await page.wait_for_selector("#users li[data-user='mira']")
    assert await page.locator("#users li").count() == 1  # this tenant's users only
    assert "1 conversations · 1 facts" in await page.inner_text("#users li[data-user='mira']")

    await page.click("#users li[data-user='mira']")
    await page.wait_for_selector("body[data-ready=yes]")
    assert await page.inner_text("#user-title") == "User mira"
    row = page.locator("#user-facts-table tbody tr").first
    assert SAID["note"] in await row.inner_text()
    assert await row.locator("a.memory-link").inner_text() == "mira-chat"
    assert await page.inner_text("#user-profile-table tr[data-source='user'] td:nth-child(2)") == "feeds"
    assert await page.inner_text("#user-profile-table tr[data-source='assistant'] td:nth-child(2)") == "muted"
    await page.screenshot(path=str(SCREENSHOTS / "user.png"), full_page=True)

    # The fact's conversation opens in the memory view.
    await row.locator("a.memory-link").click()
    await page.locator("#memory-title", has_text="mira-chat").wait_for()
    assert not await page.is_visible("#user")
    assert errors == []
    await context.close()
