"""Hostile traces read from S3 (moto's server) get the same answers as from a local disk
(issue 29, items 1, 2 and 6): deep nesting and a gzip bomb are a 422 that says why in every
profile route, the download included; a 20-digit step marker is served."""

from __future__ import annotations

import gzip

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from tests.kinds.profile import hostile

FILES = {
    "prof/good.1.pt.trace.json": hostile.base,
    "prof/deep.1.pt.trace.json": hostile.deep_args,
    "prof/deepgz.1.pt.trace.json.gz": lambda: gzip.compress(hostile.deep_args()),
    "prof/bomb.1.pt.trace.json.gz": hostile.bomb,
    "prof/step20.1.pt.trace.json": lambda: hostile.huge_numbers()["step20"],
}


@pytest.fixture(scope="module")
def api(s3):
    import boto3  # (moto's, which the s3 fixture has)

    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    for key, make in FILES.items():
        client.put_object(Bucket="logs", Key=f"hostile/{key}", Body=make())
    with serving("s3://logs/hostile", load_timeout=60) as server:
        http = Client(server.url)
        wait_for(lambda: len(http.json("/api/tags", kind="profile")["runs"].get("prof", []))
                 == len(FILES), timeout=60)
        yield http
        http.close()


def _statuses(api, tag: str) -> dict[str, tuple[int, dict]]:
    out = {}
    for route, query in {**hostile.ROUTES, "trace": {}}.items():
        r = api.get(f"/api/profile/{route}", {"run": "prof", "tag": tag, **query})
        out[route] = (r.status_code, r.json() if r.status_code != 200 or route != "trace"
                      else {})
    return out


@pytest.mark.parametrize("tag, why", [("deep", hostile.TOO_DEEP), ("deepgz", hostile.TOO_DEEP),
                                      ("bomb", hostile.BOMB)])
def test_a_hostile_trace_in_s3_is_a_422_that_says_why(api, tag, why):
    api.get("/api/profile/overview", {"run": "prof", "tag": tag})  # (the parse fails first)
    for route, (status, body) in _statuses(api, tag).items():
        assert status == 422 and why in body["error"], (route, status, body)
    for route, (status, body) in _statuses(api, "good").items():
        assert status == 200, (route, status, body)


def test_a_20_digit_step_marker_in_s3_is_served(api):
    for route, (status, body) in _statuses(api, "step20").items():
        assert status == 200, (route, status, body)
    assert api.json("/api/profile", run="prof", tag="step20")["steps"] == [5]
