"""A real headless Chromium for page tests, with every network request refused.

Debian's ``chromium`` package is the browser (``.ci/run`` installs it, as it
does bubblewrap); playwright only drives it, and never downloads one. A test
that needs a page takes the ``page`` fixture; where no Chromium can be found
it is skipped with the reason printed. Anything the page asks of the network
is aborted and recorded, so "works offline" is asserted, not assumed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import attrs
import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The system Chromium, or ``$ARENA_CHROMIUM`` when set."""
    explicit = os.environ.get("ARENA_CHROMIUM")
    if explicit:
        return explicit
    return next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)


@attrs.define
class PageWatch:
    """What a page did that a test must check: console errors and network attempts."""

    console_errors: list[str] = attrs.field(factory=list)
    page_errors: list[str] = attrs.field(factory=list)
    network: list[str] = attrs.field(factory=list)

    def assert_clean(self) -> None:
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == [], self.page_errors
        assert self.network == [], self.network


def pytest_collection_modifyitems(items):
    """Mark ``browser`` every test that needs Chromium, through any fixture: the fast run
    (``-m "not browser and not sandbox and not slow"``) leaves them out by what they use."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with sync_api.sync_playwright() as driver:
        # As root (CI), Chromium's own sandbox cannot start without --no-sandbox.
        launched = driver.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def open_page(browser):
    """Opens pages, each in its own browser context (its own storage and cookies, as another
    person's browser would have), whose requests to anything but file:, data:, blob: and
    loopback are aborted. ``open_page(init_script=None)`` returns ``(page, watch)``; the
    test calls ``watch.assert_clean()`` when it is done. All are closed after the test."""
    contexts = []

    def open_(init_script: str | None = None):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        watch = PageWatch()

        def route(request_route):
            url = request_route.request.url
            if url.startswith(("file:", "data:", "blob:")) or _loopback(url):
                request_route.continue_()
            else:
                watch.network.append(url)
                request_route.abort()

        context.route("**/*", route)
        if init_script is not None:
            context.add_init_script(init_script)
        new_page = context.new_page()
        new_page.on(
            "console", lambda msg: msg.type == "error" and watch.console_errors.append(msg.text)
        )
        new_page.on("pageerror", lambda exc: watch.page_errors.append(str(exc)))
        return new_page, watch

    try:
        yield open_
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def page(open_page):
    """One fresh page: ``(page, watch)``, as :func:`open_page` opens it."""
    return open_page()


def _loopback(url: str) -> bool:
    """Pages served by the arena itself (``arena serve``) live on 127.0.0.1."""
    return url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:"))


def loaded(tab, page: Path, fragment: str = "") -> None:
    """Open a page file (at ``fragment``) and wait until its script has laid it out."""
    tab.goto(page.as_uri() + fragment)
    tab.wait_for_selector("body[data-ready]", state="attached")
