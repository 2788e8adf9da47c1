"""Fixtures for the server tests: the standard logdir (tests.helpers.logs) and a real server
on a free loopback port, with a client for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.logs import write_logs
from tests.helpers.server import serving


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    return write_logs(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def server(logdir):
    with serving(logdir, reload_interval=0.2) as handle:
        yield handle


@pytest.fixture(scope="module")
def client(server) -> Client:
    return Client(server.url)
