"""Fixtures shared by every suite: one headless Chromium for the whole session.

Playwright's sync API allows one running instance per process, so every browser test,
whatever its folder, uses this one fixture.
"""

from __future__ import annotations

import pytest

from visualdl.testing import chromium_missing, launch_chromium


@pytest.fixture(scope="session")
def browser():
    missing = chromium_missing()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()
