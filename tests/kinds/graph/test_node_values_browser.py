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


# ---- "Show in graph" keeps the profile step and span --------------------------------------
_OPS = [("conv2d", "features/0"), ("relu", "features/1"), ("max_pool2d", "features/2"),
        ("conv2d", "features/3"), ("relu", "features/4"), ("flatten", "flatten"),
        ("linear", "classifier")]


def _trace(first: int, convs) -> dict:
    """A vf.profiler-style trace of the tiny CNN's forward ops: one ProfilerStep per pair in
    ``convs`` (from step ``first``), its two conv2d calls taking those microseconds."""
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    t, seq = 10.0, 0
    for k, (a, b) in enumerate(convs):
        start, ops = t, []
        for name, scope in _OPS:
            dur = {"features/0": a, "features/3": b}[scope] if name == "conv2d" else 5.0
            seq += 1
            ops.append({"ph": "X", "cat": "Operator", "name": name, "pid": 1, "tid": 1,
                        "ts": t + 1, "dur": dur,
                        "args": {"Sequence number": seq, "Layer Scope": scope}})
            t += dur + 2
        t += 5
        events.append({"ph": "X", "cat": "ProfileStep", "name": f"ProfilerStep#{first + k}",
                       "pid": 1, "tid": 1, "ts": start, "dur": t - start,
                       "args": {"Step": first + k}})
        events += ops
        t += 10
    return {"traceEvents": events}


@pytest.fixture(scope="module")
def two_profiles(tmp_path_factory):
    """The tiny CNN's graph beside two profiles whose costliest conv2d node differs: logged
    at step 2 (ProfilerStep 2: features/0, n1; step 3: features/3, n4; both: n1) and at step 6
    (n4)."""
    import numpy as np

    from tests.kinds.graph.node_data import tiny_cnn
    from visualdl import LogWriter

    logdir = tmp_path_factory.mktemp("two_profiles")
    with LogWriter(str(logdir / "two"), system_metrics=False) as writer:
        writer.add_graph(tiny_cnn().to_onnx([np.zeros((1, 1, 8, 8), np.float32)]), step=0,
                         tag="model")
        writer.add_profile("worker0", _trace(2, [(600.0, 100.0), (100.0, 200.0)]), step=2,
                           end_step=3)
        writer.add_profile("worker0", _trace(6, [(100.0, 500.0), (100.0, 500.0)]), step=6,
                           end_step=7)
    with serving(str(logdir)) as handle:
        client = Client(handle.url)
        model = client.json("/api/graph/models")["models"][0]
        yield handle, client, model
        client.close()


def _show_conv2d_in_graph(watched, handle, span: str):
    """From the profiler's operator table of the profile logged at step 2 (not the newest)
    over ``span``, "Show in graph" on conv2d; returns the page and the values requests."""
    from urllib.parse import parse_qs, urlsplit

    page = open_profiler(watched, handle, run="two", tag="worker0")
    pane(page, "operators")
    page.select_option("select[name=profile-step]", "2")
    page.wait_for_function("() => [...document.querySelectorAll('select[name=profile-span] option')]"
                           ".some((o) => o.value === '3')")
    if span != "all":
        page.select_option("select[name=profile-span]", span)
        page.wait_for_function("(s) => { const c = document.querySelector('.prof-operators caption');"
                               " return c && c.textContent.includes(`step ${s}`); }", arg=span)
    asked = []
    page.on("request", lambda r: "api/graph/values" in r.url and asked.append(
        {k: v[0] for k, v in parse_qs(urlsplit(r.url).query).items()}))
    page.locator(".prof-operators tbody tr[data-name='conv2d'] button.show-in-graph").click()
    page.wait_for_selector("#tab-graph[aria-selected=true]")
    _wait_values(page)
    return page, asked


@pytest.mark.parametrize(("span", "costliest"), [("all", "n1"), ("3", "n4")])
def test_show_in_graph_keeps_the_profile_step_and_span(watched, two_profiles, span, costliest):
    handle, client, model = two_profiles
    wanted = {"profile_step": "2", **({} if span == "all" else {"span": span})}
    body = _answer(client, model=model["id"], by="profile", op="conv2d", **wanted)
    assert body["op_nodes"][0]["id"] == costliest  # (the newest profile's is n4, all steps n1)
    page, asked = _show_conv2d_in_graph(watched, handle, span)
    page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=costliest)
    assert asked and all(a.get("profile_step") == "2" and a.get("span") == wanted.get("span")
                         and a["op"] == "conv2d" for a in asked), asked
    listed = page.locator(".graph-values-op li button").evaluate_all(
        "(bs) => bs.map((b) => b.dataset.id)")
    assert listed == [n["id"] for n in body["op_nodes"]]
    label = page.inner_text(".graph-values-label")
    assert "profile of step 2" in label and ("step 3 only" in label) == (span == "3")
    assert "graph_pstep=2" in page.url and ("graph_pspan=3" in page.url) == (span == "3")
    # the URL alone reproduces it (a copied link)
    page.reload()
    _wait_values(page)
    page.wait_for_function("(id) => window.__vdlGraph.selected === id", arg=costliest)
    assert asked[-1].get("profile_step") == "2" and asked[-1].get("span") == wanted.get("span")


def test_values_api_span(two_profiles):
    _, client, model = two_profiles
    body = _answer(client, model=model["id"], by="profile", profile_step="2", span="2")
    assert body["profile"]["span"] == "2" and body["steps"] == 1
    assert body["nodes"]["n1"] == pytest.approx(600.0)
    whole = _answer(client, model=model["id"], by="profile", profile_step="2")
    assert whole["nodes"]["n1"] == pytest.approx(350.0) and whole["profile"]["span"] == "all"
    r = client.get("/api/graph/values", params={"model": model["id"], "by": "profile",
                                                "profile_step": "2", "span": "9"})
    assert r.status_code == 404 and "no step 9" in r.json()["error"]
    r = client.get("/api/graph/values", params={"model": model["id"], "by": "profile",
                                                "span": "x"})
    assert r.status_code == 400
