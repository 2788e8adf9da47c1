"""A logdir of runs with configs (see logs.py) and a client of a real server on it."""

from __future__ import annotations

import pytest

from tests.helpers.http import client_of
from tests.kinds.config.logs import write_config_runs


@pytest.fixture(scope="package")
def config_logdir(tmp_path_factory):
    return write_config_runs(tmp_path_factory.mktemp("configs"))


@pytest.fixture(scope="package")
def cfg_client(config_logdir):
    with client_of(config_logdir) as client:
        yield client
