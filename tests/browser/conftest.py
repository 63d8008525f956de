import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.factories import default_space

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run in a
# thread with a running loop unless told that it is safe, which it is for these tests.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"


@pytest.fixture
def memory_roots(transactional_db) -> None:
    """The internal folders and the user's documents, as the migration makes them.

    Transactional tests empty the tables when they end, so the rows the migration wrote are
    gone for the next one; this puts them back (a new space gets its internal folders).
    """
    default_space()  # made again if emptied, and with it its internal folders


# One browser for the browser tests, closed once they end: Playwright's sync API keeps an event
# loop running in this thread while it is open, and asyncio code in later tests could not run.
@pytest.fixture(scope="package")
def chromium_browser():
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium (make test does it as root)"
        if os.environ.get("MEMSITE_REQUIRE_SERVICES") == "1":
            pytest.fail(message)  # CI must run the browser tests, not skip them
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium_browser) -> Iterator:
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def htmx_settled(page) -> None:
    """Waits until htmx has settled what it swapped in: it hooks the new elements' triggers up
    only then (20 ms after the swap), and input given before that goes unheard."""
    expect(page.locator(".htmx-added, .htmx-settling")).to_have_count(0)


@pytest.fixture
def console_errors(page) -> list[str]:
    """Errors the page reported: console errors (htmx logs a swap with no target there) and
    uncaught exceptions."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


@pytest.fixture
def screenshot(page):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
