"""Browser tests: Playwright driving Debian's Chromium against a live service (worker.testing.live)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browsers import HOW_TO_ENABLE, chromium, missing_reason
from tests.support.paths import ROOT
from tests.support.plugin import services_required
from worker.testing.live import LiveService

# The GPU's work done in the browser's own process, in software, and no extensions, audio, crash reporter or
# translate/media-router/hints services: the whole browser, headless, took a tenth less CPU over tests/browser
# (process accounting, 341 and 321 CPU-seconds against 371 and 377). The headless shell, preferred where it is
# installed (tests/support/browsers.py), takes the same flags.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--in-process-gpu", "--disable-gpu-compositing",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-extensions", "--mute-audio", "--disable-breakpad",
                 "--disable-features=Translate,MediaRouter,OptimizationHints"]
#: Where the screenshots of each page go (the repo's test-output folder is git-ignored).
SCREENSHOTS = Path(os.environ.get("DEALER_TEST_OUTPUT", ROOT / "test-output")) / "screenshots"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    found = chromium()
    if found is None:
        message = f"browser tests need Chromium: {missing_reason()}; to run them, {HOW_TO_ENABLE}"
        if services_required():
            pytest.fail(message + " (DEALER_REQUIRE_SERVICES is set)")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(found), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def live(shared_live: LiveService) -> LiveService:
    """The session's live service of each mode (tests/support/plugin.py: one takes seconds to start),
    shared with the other modules that need none of their own; a module that does defines its own
    ``live``."""
    return shared_live


@pytest.fixture
def page(browser: Any, live: LiveService) -> Iterator[Any]:
    """A fresh tab on the live service; fails the test on any script error the page raised or logged."""
    context = browser.new_context(base_url=live.url, viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.set_default_timeout(20_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    # A refused request logs "Failed to load resource"; the tests check those answers themselves.
    tab.on("console", lambda message: errors.append(message.text)
           if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
    yield tab
    context.close()
    assert not errors, f"the page reported errors: {errors}"


@pytest.fixture
def screenshot(live: LiveService) -> Any:
    """screenshot(page, name): a full-page PNG under test-output/screenshots/, named by mode."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(tab: Any, name: str) -> Path:
        path = SCREENSHOTS / f"{live.mode}-{name}.png"
        tab.evaluate("window.scrollTo(0, 0)")  # the sticky header belongs at the top of a full-page shot
        tab.screenshot(path=str(path), full_page=True)
        return path

    return take
