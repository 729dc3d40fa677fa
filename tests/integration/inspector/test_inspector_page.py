"""The inspector page in headless Chromium: sign in, open a grown memory, and see what the API says it holds.

Screenshots of each panel go to bench/results/inspector/ for a person to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, Page

from tests.integration.inspector.browser import SCREENSHOTS, chromium
from tests.integration.inspector.conftest import Grown

PANELS = ["panel-summary", "panel-timeline", "panel-activation", "panel-facts-block", "panel-graph", "panel-recall"]


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    async with chromium() as running:
        yield running


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = await context.new_page()
    yield opened
    await context.close()


async def _sign_in(page: Page, url: str, key: str) -> None:
    await page.goto(f"{url}/inspect")
    await page.fill("#api-key", key)
    await page.click("#signin-form button[type=submit]")


async def test_the_page_shows_the_memory_the_api_describes(page: Page, grown: Grown) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await _sign_in(page, grown.url, grown.key)
    await page.click(f"#memories li[data-memory='{grown.memory_id}']")
    await page.wait_for_selector("body[data-ready=yes]")
    await page.wait_for_selector("body[data-exported=yes]")
    async with httpx.AsyncClient(base_url=grown.url) as http:
        state = (await http.get(f"/v1/memories/{grown.memory_id}",
                                headers={"Authorization": f"Bearer {grown.key}"})).json()

    # The key lives in this tab's session storage only.
    assert await page.evaluate("sessionStorage.getItem('lethe.apiKey')") == grown.key
    assert await page.evaluate("localStorage.length") == 0

    counts = {s: sum(e["state"] == s for e in state["episodes"]) for s in ("live", "leaving", "sealed", "forgotten")}
    assert sum(1 for c in counts.values() if c) >= 2, counts  # the memory faded: several states to show
    for name, expected in counts.items():
        assert await page.get_attribute(f"#count-{name}", "data-count") == str(expected)
        # Every episode fits one window here, so the timeline draws each, coloured by its state.
        assert await page.locator(f"#timeline rect.episode[data-state={name}]").count() == expected
    shown = await page.locator("#timeline rect.episode").count()
    assert shown == len(state["episodes"])
    assert await page.locator("#activation polyline.series").count() == shown
    assert await page.locator("#timeline line.marker.fade").count() >= 1
    assert await page.locator("#timeline line.marker.sleep").count() == 1
    assert await page.locator("#activation line.marker.sleep").count() == 1

    assert state["facts_block"]
    assert await page.text_content("#facts-block") == state["facts_block"]

    # Hovering an episode that left shows its turns and the facts written for it.
    left = next(e for e in state["episodes"] if e["state"] in ("sealed", "leaving") and e["facts_written"])
    await page.hover(f"#timeline rect.episode[data-episode='{left['id']}']")
    card = await page.text_content("#tooltip")
    assert f"turns {left['first_turn']}–{left['last_turn']}" in card
    assert "facts written for it (" in card
    assert f"{left['first_turn']}: Turn {left['first_turn']}: about the" in card  # what the user said, from the export
    await page.screenshot(path=SCREENSHOTS / "hover.png")

    graph_rows = await page.locator("#graph-table tbody tr").count()
    assert graph_rows >= state["facts"] > 0
    await page.fill("#graph-search", "no fact says this")
    assert await page.locator("#graph-table tbody tr").count() == 0
    await page.fill("#graph-search", "")
    # Each turn's recall block as the export holds it, placed and (once the next message came) distilled.
    async with httpx.AsyncClient(base_url=grown.url) as http:
        exported = (await http.get(f"/v1/memories/{grown.memory_id}/export",
                                   headers={"Authorization": f"Bearer {grown.key}"})).json()
    blocks = exported["recall_blocks"]
    if blocks:
        assert await page.locator("#recall .recall-turn").count() == min(len(blocks), 500)
        assert blocks[-1]["text"].splitlines()[1] in await page.text_content("#recall")
    else:
        assert "None yet" in await page.text_content("#recall")
    assert (await page.get_attribute("#workflow-link", "href")).endswith(grown.memory_id)

    await page.mouse.move(0, 0)
    for panel in PANELS:
        await page.locator(f"#{panel}").screenshot(path=SCREENSHOTS / f"{panel}.png")
    await page.screenshot(path=SCREENSHOTS / "page.png", full_page=True)
    assert errors == []


async def test_a_wrong_key_shows_an_error_not_data(page: Page, grown: Grown) -> None:
    await _sign_in(page, grown.url, "lethe_not-a-key")
    error = page.locator("#signin-error")
    await error.wait_for(state="visible")
    assert "refused" in await error.text_content()
    assert await page.locator("#app").is_hidden()
    assert await page.locator("#memories li").count() == 0
    assert await page.evaluate("sessionStorage.getItem('lethe.apiKey')") is None
    await page.screenshot(path=SCREENSHOTS / "wrong-key.png")


async def test_another_tenants_memory_shows_an_error_not_data(page: Page, grown: Grown) -> None:
    await _sign_in(page, grown.url, grown.other_key)
    await page.wait_for_selector("#app:not([hidden])")
    assert await page.locator(f"#memories li[data-memory='{grown.memory_id}']").count() == 0
    await page.goto(f"{grown.url}/inspect#/m/{grown.memory_id}")
    await page.wait_for_selector("body[data-ready=error]")
    assert "404" in await page.text_content("#memory-error")
    assert await page.locator("#memory-body").is_hidden()
    assert await page.locator("#timeline rect.episode").count() == 0
    assert await page.text_content("#facts-block") in ("", None)
    await page.screenshot(path=SCREENSHOTS / "other-tenant.png")


async def test_a_pending_note_ask_shows_its_turns_and_how_long_it_has_waited(page: Page, grown: Grown) -> None:
    async with httpx.AsyncClient(base_url=grown.url) as http:
        ask = (await http.get(f"/v1/memories/{grown.pending_id}",
                              headers={"Authorization": f"Bearer {grown.key}"})).json()["note_ask"]
    assert ask["pending"]
    await _sign_in(page, grown.url, grown.key)
    await page.click(f"#memories li[data-memory='{grown.pending_id}']")
    await page.wait_for_selector("body[data-ready=yes]")
    said = await page.text_content("#note-ask-state")
    assert f"turns {ask['turns'][0]}–{ask['turns'][1]}" in said and f"asked {ask['asks']} time" in said
    assert "h" in await page.text_content("#note-ask-waited")  # asked about 30 hours ago, by the memory's clock
    assert await page.locator("#memories li[data-memory] .meta", has_text="note ask pending").count() == 1
    await page.locator("#panel-summary").screenshot(path=SCREENSHOTS / "note-ask-pending.png")
