"""Browser fixtures: a page that records console errors, on the session's Chromium (the
``browser`` fixture of tests/conftest.py: Debian's, driven by Playwright, never downloaded)."""

from __future__ import annotations

import pytest

from tests.helpers.pages import PageWatch


@pytest.fixture
def watched(browser):
    """A fresh 1280x800 page; the test fails if the page logged any console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    watch = PageWatch(page)
    yield watch
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
