"""Data on the nodes in Chromium: the graph of a small CNN trained by ``Model.fit`` (the
``VisualDL`` callback logs the graph and a ``vf.profiler`` profile into one run) coloured by
profiler time: the legend and the ranked list show, the list's first entry is the top node
of the API's answer, each coloured box's fill is the legend scale's colour for its value,
and "Show in graph" on the profiler's operator table lands on the graph with the costliest
node of that operator selected."""

from __future__ import annotations

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from tests.kinds.graph.node_data import fit_tiny_cnn
from tests.kinds.profile.test_browser import open_profiler, pane

pytestmark = pytest.mark.browser
pytest.importorskip("numba")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("nodedata_browser")
    fit_tiny_cnn(str(logdir / "cnn"))
    with serving(str(logdir)) as handle:
        client = Client(handle.url)
        model = client.json("/api/graph/models")["models"][0]
        yield handle, client, model
        client.close()


@pytest.fixture
def watched(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60000)  # two shared cores: a parse may wait behind others
    watch = PageWatch(page)
    yield watch
    assert watch.errors == []
    page.close()


def _answer(client, **params):
    def ask():
        r = client.get("/api/graph/values", params=params)
        return [r] if r.status_code != 503 else None
    r = wait_for(ask, timeout=30)[0]
    assert r.status_code == 200, r.text
    return r.json()


def _wait_values(page):
    page.wait_for_function("() => { const p = document.querySelector('section.graph-values');"
                           " return p && p.dataset.state === 'ready'; }")


def test_colour_by_profiler_time(watched, served):
    handle, client, model = served
    body = _answer(client, model=model["id"], by="profile")
    page = watched.page
    page.goto(f"{handle.url}?tab=graph&graph_model={model['id']}&graph_color=profile")
    _wait_values(page)
    assert page.locator("#graph-color").input_value() == "profile"
    # the legend: a colour bar between the drawn minimum and maximum, in time per step
    assert page.locator(".graph-values-bar").is_visible()
    lo = float(page.get_attribute(".graph-values-range .min", "data-value"))
    hi = float(page.get_attribute(".graph-values-range .max", "data-value"))
    drawn = page.evaluate("() => window.__vdlGraph.data.nodes.map((n) => n.id)")
    shown = {i: (body["groups"] if i.startswith("g:") else body["nodes"]).get(i) for i in drawn}
    shown = {i: v for i, v in shown.items() if v is not None}
    assert (lo, hi) == (pytest.approx(min(shown.values())), pytest.approx(max(shown.values())))
    assert "time per step" in page.inner_text(".graph-values-range .unit")
    # the ranked list: the API's top node first
    first = page.locator(".graph-values-ranked li button").first
    assert first.get_attribute("data-id") == body["top"][0]["id"]
    assert first.inner_text() == body["top"][0]["name"]
    # every coloured box is filled with the scale's colour for its value
    for node_id, value in shown.items():
        fill = page.get_attribute(f"svg.graph-svg g.node[data-id='{node_id}'] rect.box", "fill")
        assert fill == page.evaluate("(v) => window.__vdlGraph.values.scale.color(v)", value)
    top = body["top"][0]["id"]
    assert page.get_attribute(f"g.node[data-id='{top}'] rect.box", "fill") == "#d94801"
    # the time is written on the costliest boxes, as the ranked list shows it
    badge = page.text_content(f"g.node[data-id='{top}'] text.badge")
    assert badge == page.inner_text(".graph-values-ranked li .value >> nth=0")
    assert badge.endswith("µs") or badge.endswith("ms")
    # a click in the list selects and centres the node
    page.locator(".graph-values-ranked li button").nth(1).click()
    second = body["top"][1]["id"]
    page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=second)
    assert "selected" in page.get_attribute(f"g.node[data-id='{second}']", "class")
    # none: the category colours come back
    page.select_option("#graph-color", "")
    page.wait_for_function("(id) => document.querySelector(`g.node[data-id='${id}'] rect.box`)"
                           ".getAttribute('fill') === '#cfe0fb'", arg=top)
    assert page.locator("section.graph-values").is_hidden()


def test_colour_by_parameters_then_flops(watched, served):
    handle, client, model = served
    page = watched.page
    page.goto(f"{handle.url}?tab=graph&graph_model={model['id']}")
    page.wait_for_function("() => window.__vdlGraph && window.__vdlGraph.svg.dataset.state"
                           " === 'ready'")
    page.select_option("#graph-color", "params")
    _wait_values(page)
    params = _answer(client, model=model["id"], by="params")
    assert page.locator(".graph-values-ranked li button").first.get_attribute("data-id") == \
        params["top"][0]["id"]
    assert "parameters" in page.inner_text(".graph-values-range .unit")
    page.select_option("#graph-color", "flops")
    page.wait_for_function("() => { const l = document.querySelector('.graph-values-label');"
                           " return l && l.textContent.startsWith('FLOPs')"
                           " && document.querySelector('section.graph-values')"
                           ".dataset.state === 'ready'; }")
    flops = _answer(client, model=model["id"], by="flops")
    assert page.locator(".graph-values-ranked li button").first.get_attribute("data-id") == \
        flops["top"][0]["id"]
    assert "graph_color=flops" in page.url


def test_show_in_graph_from_the_operator_table(watched, served):
    handle, client, model = served
    body = _answer(client, model=model["id"], by="profile", op="conv2d_grad")
    costliest = body["op_nodes"][0]["id"]
    page = open_profiler(watched, handle, run="cnn", tag="worker0")
    pane(page, "operators")
    row = page.locator(".prof-operators tbody tr[data-name='conv2d_grad']")
    row.locator("button.show-in-graph").click()
    page.wait_for_selector("#tab-graph[aria-selected=true]")
    _wait_values(page)
    page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=costliest)
    assert "selected" in page.get_attribute(f"g.node[data-id='{costliest}']", "class")
    assert page.locator("#graph-color").input_value() == "profile"
    listed = page.locator(".graph-values-op li button").evaluate_all(
        "(bs) => bs.map((b) => b.dataset.id)")
    assert listed == [n["id"] for n in body["op_nodes"]]
    assert "graph_op=conv2d_grad" in page.url
