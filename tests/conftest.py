"""Fixtures and reporting shared by every suite.

One headless Chromium for the whole session: Playwright's sync API allows one running
instance per process, so every browser test, whatever its folder, uses this one fixture.

PyTorch is optional (the README's ``pip install -e ".[test]"`` leaves it out: a registry
install fetches gigabytes); the tests that check ops, optimizers and exported graphs against
it skip without it. Their skips, whatever words each test file uses, get one reason, and the
summary says how many there were and how to run them, so a fresh checkout's "155 skipped"
is never a mystery.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers.pages import watched_page
from visualdl.testing import chromium_missing, launch_chromium

TORCH_MISSING = "PyTorch is not installed (pip install torch; .ci/run installs the CPU wheel)"
# The words the test files use today: importorskip("torch"), "torch not installed",
# "torch is not installed (...)". Not "checked against PyTorch" (a skip for another reason).
_TORCH_SKIP = re.compile(r"could not import 'torch'|No module named 'torch'"
                         r"|\btorch\b (is )?not installed")


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


def _is_torch_skip(report: pytest.TestReport | pytest.CollectReport) -> bool:
    longrepr = report.longrepr
    return (report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3
            and TORCH_MISSING in str(longrepr[2]))


def _name_torch_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Give a skip for want of torch the one reason (``-rs`` then lists them together)."""
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        path, lineno, reason = longrepr
        if _TORCH_SKIP.search(str(reason)):
            report.longrepr = (path, lineno, f"Skipped: {TORCH_MISSING}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    report = yield
    _name_torch_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # noqa: ANN201
    report = yield
    _name_torch_skip(report)  # a module that calls importorskip("torch") at import
    return report


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 - pytest's TerminalReporter
    count = sum(1 for report in terminalreporter.stats.get("skipped", [])
                if _is_torch_skip(report))
    if count:
        terminalreporter.write_line(f"{count} tests skipped: {TORCH_MISSING}")


@pytest.fixture
def watched(browser):
    """A fresh 1280x800 page; the test fails if the page logged any console error."""
    yield from watched_page(browser, accept_downloads=True)
