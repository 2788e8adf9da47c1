"""Bad JSON bodies are a 400 with the reason, never a 500 (issue 13, item 8, server part).

``request.get_json`` raised RecursionError on deeply nested JSON and ``{"points": 1e400}``
(parsed as infinity) raised OverflowError in ``int()``: both answered 500.
"""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.logs import write_logs
from tests.helpers.server import serving

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_IN_OBJECT = '{"series": ' + DEEP + ', "points": 10}'
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = write_logs(tmp_path_factory.mktemp("bodies"))
    with serving(root) as server:
        client = Client(server.url)
        yield client
        client.close()


def _error(response, status: int = 400) -> str:
    assert response.status_code == status, response.text[:300]
    assert response.headers["Content-Type"].startswith("application/json")
    return response.json()["error"]


@pytest.mark.parametrize("body, reason", [
    (DEEP, "nested too deeply"),
    (DEEP_IN_OBJECT, "nested too deeply"),
    ('{"series": [{"run": "train", "tag": "loss"}], "points": 1e400}', "1e400"),
    ('{"series": [{"run": "train", "tag": "loss"}], "points": -1e400}', "-1e400"),
    ('{"series": [{"run": "train", "tag": "loss"}], "points": NaN}', "NaN"),
    ('{"series": [{"run": "train", "tag": "loss"}], "points": Infinity}', "Infinity"),
    ('{"series": [{"run": "train", "tag": "loss"}], "points": 1' + "0" * 5000 + "}", "not valid JSON"),
    ('{"series": [', "not valid JSON"),
    (b'{"series": "\xff"}', "not valid JSON"),
])
def test_scalars_batch_rejects_bad_bodies_with_a_reason(api, body, reason):
    message = _error(api.post("/api/scalars/batch", data=body, headers=JSON))
    assert reason in message


def test_points_as_huge_float_is_a_range_error(api):
    message = _error(api.post("/api/scalars/batch", headers=JSON,
                              json={"series": [{"run": "train", "tag": "loss"}], "points": 1e300}))
    assert message == "parameter points must be between 4 and 1000000"


def test_a_good_batch_still_works(api):
    response = api.post("/api/scalars/batch", json={"series": [{"run": "train", "tag": "loss"}],
                                                    "points": 10})
    assert response.status_code == 200
    assert response.json()["series"][0]["total"] == 3000


@pytest.mark.parametrize("body", [DEEP, '{"model": "x", "expanded": ' + DEEP + "}",
                                  '{"model": "x", "attrs": 1e400}'])
def test_graph_view_rejects_bad_bodies_with_a_reason(api, body):
    message = _error(api.post("/api/graph/view", data=body, headers=JSON))
    assert "nested too deeply" in message or "out of range" in message
