"""``visualdl.integrations`` sits on top, beside ``compat``: it may use the writer (and
compat's public names), and nothing of the package imports it, so no layer below ever
loads a trainer's library."""

from __future__ import annotations

from tests.architecture.test_layers import IMPORTS, package_of

# what the integrations stand on; the reader, the server and the framework are not theirs
ALLOWED = {"integrations", "writer", "compat", "kinds", "format", "storage"}


def test_the_integrations_use_only_the_writing_side():
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) == "integrations" and package_of(t) not in ALLOWED]
    assert bad == []


def test_nothing_of_visualdl_imports_the_integrations():
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(t) == "integrations" and package_of(m) != "integrations"]
    assert bad == []


def test_the_checker_sees_the_integrations():
    assert any(package_of(m) == "integrations" and t == "visualdl.writer.log_writer"
               for m, t, _, _ in IMPORTS)
