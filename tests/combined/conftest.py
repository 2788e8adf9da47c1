"""Browser fixture for the combined-charts tests: a page on the session's Chromium that fails
the test if it logged any console error (as tests/browser's ``watched``)."""

from __future__ import annotations

import pytest

from tests.helpers.pages import PageWatch


@pytest.fixture
def watched(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    watch = PageWatch(page)
    yield watch
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
