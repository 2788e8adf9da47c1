"""``visualdl.tracking`` sits on the writer: it never reaches the reader, the server, the
framework or the command line (it is loaded in training scripts), and nothing below it
imports it (tests/architecture checks the rest of the layering)."""

from __future__ import annotations

from tests.architecture.test_layers import IMPORTS, package_of

ABOVE = {"reader", "server", "framework", "cli", "convert", "export", "notebook", "api"}
BELOW = {"format", "storage", "series", "sources", "kinds", "writer", "reader", "api",
         "server"}


def test_tracking_imports_nothing_above_the_writer():
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) == "tracking" and package_of(t) in ABOVE | {"visualdl"}]
    assert bad == []


def test_nothing_below_imports_tracking():
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) in BELOW and package_of(t) == "tracking"]
    assert bad == []
