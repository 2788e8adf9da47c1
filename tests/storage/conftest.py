"""A real S3 API for the storage tests: moto's server on 127.0.0.1, with its request log.

One server per test module; each test writes under a prefix of its own (``s3_url``)."""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("moto.server", reason="the storage tests need moto[server] (test extra)")
pytest.importorskip("s3fs", reason="the storage tests need s3fs (test extra)")

from visualdl.storage.testing import LocalS3  # noqa: E402

BUCKET = "logs"


@pytest.fixture(scope="module")
def s3():
    """moto's S3 on a free loopback port; AWS_ENDPOINT_URL and test credentials are set in
    ``os.environ`` (so child processes started by the tests reach it too)."""
    with LocalS3() as server:
        server.make_bucket(BUCKET)
        yield server


@pytest.fixture
def s3_url(s3) -> str:
    """A fresh prefix in the bucket, as a URL."""
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory_url() -> str:
    return f"memory://vdl-tests/{uuid.uuid4().hex[:12]}"
