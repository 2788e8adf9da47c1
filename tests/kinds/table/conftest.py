"""A logdir of tables (tests/kinds/table/common.py) served on 127.0.0.1."""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.table.common import write_tables


@pytest.fixture(scope="package")
def tables_logdir(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("tables"))


@pytest.fixture(scope="package")
def tables_server(tables_logdir):
    with serving(tables_logdir) as handle:
        yield handle


@pytest.fixture(scope="package")
def tables_api(tables_server) -> Client:
    return Client(tables_server.url)
