"""A real S3 API for the storage tests: moto's server on 127.0.0.1, with its request log.

One server per test module; each test writes under a prefix of its own (``s3_url``). Each
fixture skips its tests without the package it needs (the test extra has them all), so the
tests that need neither, or only fsspec, run anyway."""

from __future__ import annotations

import uuid

import pytest

BUCKET = "logs"


@pytest.fixture(scope="module")
def s3():
    """moto's S3 on a free loopback port; AWS_ENDPOINT_URL and test credentials are set in
    ``os.environ`` (so child processes started by the tests reach it too)."""
    pytest.importorskip("moto.server", reason="the S3 tests need moto[server] (test extra)")
    pytest.importorskip("s3fs", reason="the S3 tests need s3fs (test extra)")
    from visualdl.storage.testing import LocalS3

    with LocalS3() as server:
        server.make_bucket(BUCKET)
        yield server


@pytest.fixture
def s3_url(s3) -> str:
    """A fresh prefix in the bucket, as a URL."""
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory_url() -> str:
    pytest.importorskip("fsspec", reason="memory:// logdirs need fsspec (test extra)")
    return f"memory://vdl-tests/{uuid.uuid4().hex[:12]}"
