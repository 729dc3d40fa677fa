"""Debian's Chromium, driven by Playwright: the only browser the tests (and bench/inspector.py) ever use.

Nothing is downloaded: Playwright is pointed at /usr/bin/chromium, which `make install` puts there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import Browser, async_playwright

__all__ = ["CHROMIUM", "SCREENSHOTS", "chromium"]

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "inspector"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        raise AssertionError(f"{CHROMIUM} is missing: `make install` installs Debian's chromium package")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()
