"""No request waits long for a trace's model: one still being built after ``WAIT_SECONDS``
is a 503 with ``Retry-After`` (the embeddings' convention), the server answers everything
else meanwhile, and the retry gets the model once it is built; the Profiler tab retries
by itself and draws the timeline when the model comes."""

from __future__ import annotations

import threading

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from tests.kinds.profile import test_store
from tests.kinds.profile.test_store import FILE
from visualdl.kinds.profile import api, build

logdir = test_store.logdir


@pytest.fixture
def gate(monkeypatch):
    """Every parse waits until the test opens the gate; a request waits 0.2 s at most."""
    opened = threading.Event()
    parse = build.parse_trace

    def held(raw):
        assert opened.wait(60), "the test never opened the gate"
        return parse(raw)

    monkeypatch.setattr(build, "parse_trace", held)
    monkeypatch.setattr(api, "WAIT_SECONDS", 0.2)
    yield opened
    opened.set()


def test_a_model_still_being_built_is_a_503_with_retry_after(logdir, gate):
    with serving(logdir) as server:
        client = Client(server.url)
        response = client.get("/api/profile/timeline", FILE, width=400)
        assert response.status_code == 503
        assert response.headers["Retry-After"] == str(api.RETRY_AFTER)
        assert "still being parsed" in response.json()["error"]
        compare = client.get("/api/profile/compare", FILE, run2="ours", tag2="train")
        assert compare.status_code == 503  # (two models, one wait)
        assert client.json("/api/runs")["runs"]  # the server answers the rest meanwhile
        gate.set()
        answer = wait_for(lambda: (r := client.get("/api/profile/timeline", FILE, width=400))
                          .status_code == 200 and r.json())
        assert answer["events"]["id"]
        assert client.json("/api/profile/compare", FILE, run2="ours", tag2="train")["rows"]
        client.close()


@pytest.mark.browser
def test_the_profiler_tab_retries_until_the_model_is_built(logdir, gate, browser):
    with serving(logdir) as server:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        watch = PageWatch(page)
        with page.expect_response(lambda r: "/api/profile/timeline" in r.url and
                                  r.status == 503, timeout=30_000):
            page.goto(f"{server.url}?tab=profiler&pane=timeline")  # (files/host: the first)
        gate.set()
        page.wait_for_function(
            "() => document.querySelector('.prof-canvas')?.dataset.state === 'ready'",
            timeout=30_000)
        assert int(page.locator(".prof-canvas").get_attribute("data-events")) > 0
        page.wait_for_selector(".prof-tab[data-pane=overview]")
        watch.finish()
        page.close()
    # the browser reports each 503 as a failed resource; nothing else went wrong
    assert [e for e in watch.errors if "status of 503" not in e] == []
