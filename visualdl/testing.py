"""Helpers for driving the dashboard in a real browser, shared by tests and benchmarks.

The browser is Debian's Chromium at ``/usr/bin/chromium``, driven by Playwright; a
browser is never downloaded. The flags keep it headless and off the network (this
machine reaches no outside host, and Chromium's background services would keep trying).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium_missing", "launch_chromium"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    # WebGL2 in software (SwiftShader) although there is no GPU: the graph view draws big
    # graphs with WebGL2. Chromium still falls back to it without this flag, but warns that the
    # automatic fallback is going away; this asks for it explicitly.
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium_missing() -> str | None:
    """Why a browser cannot be driven here, or None when it can."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; no browser download needed)"
    return None


def launch_chromium(playwright: Any) -> Any:
    """Launch Debian's Chromium from a ``sync_playwright()`` context."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
