"""Fixtures for the kinds' API tests: a logdir holding every kind (tests.helpers.logs) and a
real server on it, with a client (``api``); and a sweep of runs with a ``client`` of its
server (tests.helpers.sweep), for the scalar and run-table routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.logs import write_kinds
from tests.helpers.server import serving
from tests.helpers.sweep import client, sweep  # noqa: F401 - fixtures of the kinds' tests


@pytest.fixture(scope="package")
def kinds_logdir(tmp_path_factory) -> Path:
    return write_kinds(tmp_path_factory.mktemp("kinds"))


@pytest.fixture(scope="package")
def kinds_server(kinds_logdir):
    with serving(kinds_logdir) as handle:
        yield handle


@pytest.fixture(scope="package")
def api(kinds_server) -> Client:
    return Client(kinds_server.url)
