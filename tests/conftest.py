"""Fixtures and reporting shared by every suite.

One headless Chromium for the whole session: Playwright's sync API allows one running
instance per process, so every browser test, whatever its folder, uses this one fixture.

PyTorch is optional (the README's ``pip install -e ".[test]"`` leaves it out: a registry
install fetches gigabytes). A test that checks against it says so in one of two ways: it
asks for the ``torch`` fixture (directly or through a fixture of its own), or it carries
``@pytest.mark.torch``. Either way it is marked ``torch``, so that ``.ci/run``'s second
stage, run after the CPU wheel is installed, selects exactly these with ``-m torch``; and
without torch it is skipped with one reason, which the summary counts and explains, so a
fresh checkout's "155 skipped" is never a mystery. Without torch, a test that is not marked
and still reaches for it (a skip for want of torch, or an ``import torch`` it catches) fails:
the torch stage would never run it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import re
import sys

import pytest

from tests.helpers.pages import watched_page
from visualdl.testing import chromium_missing, launch_chromium

TORCH_MISSING = "PyTorch is not installed (pip install torch; .ci/run installs the CPU wheel)"
# What a skip for want of torch says when it does not come from the mark: importorskip's
# words and the usual "torch (is) not installed". Not "checked against PyTorch".
_TORCH_SKIP = re.compile(r"could not import 'torch'|No module named 'torch'"
                         r"|\btorch\b (is )?not installed")
_UNMARKED = ("needs torch but is not marked `torch` (ask for the `torch` fixture or add "
             "@pytest.mark.torch): .ci/run's torch stage, `pytest -m torch`, would never run it")


def _torch_missing() -> bool:
    """Whether torch cannot be imported here (looked up, not imported: cheap)."""
    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):  # hidden by a finder, or a broken entry in sys.modules
        return True


class _TorchImports(importlib.abc.MetaPathFinder):
    """Without torch: notes each test (by node id) during which code of this repository
    (under the rootdir, not an installed package) tried to import it, so that an unmarked
    test that catches the ImportError and goes on is not silently half-run. (Libraries that
    look for torch themselves, as tensorboardX does, are not the tests' business.)"""

    def __init__(self) -> None:
        self.root = os.getcwd() + os.sep  # the rootdir, once pytest_configure has run
        self.running: str | None = None
        self.tried: set[str] = set()

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201 - finder API
        if self.running is not None and name.partition(".")[0] == "torch":
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen "):
                frame = frame.f_back  # the import system's own frames
            where = frame.f_code.co_filename if frame is not None else ""
            if where.startswith(self.root) and "-packages" + os.sep not in where:
                self.tried.add(self.running)
        return None  # never finds it: the import fails as it would have


_imports = _TorchImports()


@pytest.fixture(scope="session")
def torch():
    """The torch module; asking for it marks the test ``torch`` (skipped without torch)."""
    return pytest.importorskip("torch", reason=TORCH_MISSING)


def pytest_configure(config: pytest.Config) -> None:
    _imports.root = str(config.rootpath) + os.sep
    # pyproject.toml registers the mark; a run outside the repository's configuration (this
    # conftest loaded as a plugin) gets it here
    if not any(line.startswith("torch:") for line in config.getini("markers")):
        config.addinivalue_line("markers", "torch: needs PyTorch (skipped without it)")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects on the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "torch" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.torch)
    if not _torch_missing():
        return
    for item in items:
        if item.get_closest_marker("torch") is not None:
            item.add_marker(pytest.mark.skip(reason=TORCH_MISSING))
    if _imports not in sys.meta_path:
        sys.meta_path.insert(0, _imports)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # noqa: ANN201
    _imports.running = item.nodeid
    try:
        return (yield)
    finally:
        _imports.running = None


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


def _fail(report: pytest.TestReport | pytest.CollectReport, why: str) -> None:
    report.outcome = "failed"
    report.longrepr = why


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    report = yield
    _name_torch_skip(report)
    if item.get_closest_marker("torch") is None:
        if _is_torch_skip(report):
            _fail(report, f"{item.nodeid} {_UNMARKED}")
        elif report.when == "call" and report.passed and item.nodeid in _imports.tried:
            _fail(report, f"{item.nodeid} imports torch (and carries on without it), so it "
                          f"{_UNMARKED}")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # noqa: ANN201
    report = yield
    _name_torch_skip(report)
    if _is_torch_skip(report):  # importorskip("torch") at a module's import
        _fail(report, f"{collector.nodeid} skips at import for want of torch, so its tests "
                      f"carry no `torch` mark and .ci/run's torch stage (`pytest -m torch`) "
                      f"would not select them: ask for the `torch` fixture in the tests")
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
