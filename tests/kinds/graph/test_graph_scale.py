"""Layout at scale: one group laid out per expand, big states laid out by a background job
with progress while the view keeps answering, and the models the view refuses (too large
for the page, or no model at all) with a clear message, in the API and in Chromium."""

from __future__ import annotations

import threading
import time

import onnx
import pytest
from onnx import TensorProto, helper

from tests.helpers import onnx_models
from tests.helpers.http import Client
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from visualdl.kinds.graph import GraphDocument, Options, parse_model
from visualdl.kinds.graph import document
from visualdl.kinds.graph.parse import MAX_NODES
from visualdl.kinds.graph.view import visible_graph

from .geometry import edges_through_boxes, overlapping_boxes

JOB_NODES = 10_000  # "expand all" on this many boxes goes to a background job


def _same_picture(a: dict, b: dict) -> None:
    """Two answers of one state draw the same thing (their timing stats aside)."""
    for key in ("width", "height", "expanded", "nodes", "frames", "edges"):
        assert a[key] == b[key], key


def _too_large() -> onnx.ModelProto:
    """One node more than the view opens (a Relu repeated: refused before any check)."""
    relu = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph([], "huge", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    graph.node.extend([relu] * (MAX_NODES + 1))
    model = helper.make_model(graph, opset_imports=onnx_models.OPSET)
    model.ir_version = 8
    return model


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    paths = {"chain": root / "chain.onnx", "huge": root / "huge.onnx",
             "notes": root / "notes.onnx", "transformer": root / "transformer.onnx"}
    onnx.save(onnx_models.residual_chain(JOB_NODES, blocks_per_stage=200), paths["chain"])
    paths["huge"].write_bytes(_too_large().SerializeToString())
    paths["notes"].write_text("these are my notes, not a model\n" * 40)
    onnx.save(onnx_models.transformer(2000), paths["transformer"])
    return paths


@pytest.fixture(scope="module")
def server(files):
    """file:0 the chain, file:1 too large, file:2 no model, file:3 the transformer."""
    with serving(models=[files["chain"], files["huge"], files["notes"],
                         files["transformer"]]) as handle:
        yield handle


@pytest.fixture(scope="module")
def client(server) -> Client:
    return Client(server.url)


# -- one group at a time ---------------------------------------------------------------------
def test_expanding_a_1000_node_scope_lays_out_it_and_its_ancestors_only():
    doc = GraphDocument(parse_model(onnx_models.residual_chain(5000, blocks_per_stage=200)))
    lay = doc.layouter
    assert doc.hierarchy.groups["stage2"].ops == 1000
    doc.view(doc.initial, Options())
    before = lay.misses
    view = doc.view(doc.expanded_set(["stage2"]), Options())
    assert lay.misses - before == view["stats"]["groups_laid_out"] == 2  # stage2, the root
    assert sum(1 for n in view["nodes"] if n.get("path", "").startswith("stage2/")) == 200
    before = lay.misses
    inner = doc.view(doc.expanded_set(["stage2", "stage2/block7"]), Options())
    assert lay.misses - before == 3  # block7, stage2, the root
    assert any(f["path"] == "stage2/block7" for f in inner["frames"])


def test_groups_of_one_shape_are_laid_out_once_and_drawn_cleanly():
    model = onnx_models.transformer(300)
    doc = GraphDocument(parse_model(model))
    view = doc.view(doc.expanded_set("all"), Options())
    layers = [p for p in doc.hierarchy.groups if p.count("/") == 1 and p.startswith("encoder/")]
    assert len(layers) == 4
    # 4 identical layers of 13 groups each: each shape laid out once, not 4 times
    assert doc.layouter.computed < 20 < view["stats"]["groups_laid_out"] == len(view["frames"]) + 1
    assert len([n for n in view["nodes"] if n["type"] == "op"]) == len(model.graph.node)
    assert overlapping_boxes(view) == [] and edges_through_boxes(view) == []
    # the shared layout is placed per layer: layer 3's frame lies below layer 2's
    frames = {f["path"]: f for f in view["frames"]}
    assert frames["encoder/layer.3"]["y"] > frames["encoder/layer.2"]["y"] + frames["encoder/layer.2"]["h"]


# -- background jobs -------------------------------------------------------------------------
def test_expand_all_job_progresses_and_matches_a_direct_layout():
    model = parse_model(onnx_models.residual_chain(JOB_NODES, blocks_per_stage=200))
    doc = GraphDocument(model)
    everything = doc.expanded_set("all")
    assert doc.is_big(everything, Options())
    seen = []
    answer = doc.view_or_progress(everything, Options(), wait=0)
    while answer.get("pending"):
        seen.append(answer["progress"])
        answer = doc.view_or_progress(everything, Options(), wait=0.05)
    assert seen, "the first answer is the job's progress, not its result"
    done = [p["done"] for p in seen if p["phase"] == "layout"]
    assert done == sorted(done)
    assert all(p["total"] == len(everything) + 1 for p in seen if p["phase"] != "waiting")
    direct = GraphDocument(model).view(everything, Options())
    _same_picture(answer, direct)
    assert len(answer["nodes"]) == JOB_NODES + 2  # every op, the input and the output
    # asked again: every group comes from the layout cache
    again = doc.view_or_progress(everything, Options(), wait=0)
    while again.get("pending"):
        again = doc.view_or_progress(everything, Options(), wait=0.05)
    assert again["stats"]["groups_laid_out"] == 0
    _same_picture(again, direct)


@pytest.fixture
def held_job(monkeypatch):
    """Background jobs stop after laying out their first group until ``release`` is set
    (``mid_layout`` says one got there): whatever a job holds mid-layout, it holds while
    the test asks its small questions, however fast the machine. Small views pass no
    progress and are never held."""
    mid_layout, release = threading.Event(), threading.Event()

    def held_visible_graph(h, layouter, items, expanded, options, progress=None):
        if progress is not None:
            report = progress

            def progress(done: int, total: int) -> None:
                report(done, total)
                if done > 0 and not release.is_set():
                    mid_layout.set()
                    release.wait(60)
        return visible_graph(h, layouter, items, expanded, options, progress)

    monkeypatch.setattr(document, "visible_graph", held_visible_graph)
    try:
        yield mid_layout, release
    finally:
        release.set()


def test_view_answers_while_an_expand_all_job_runs(client, held_job):
    # display options no other test lays out (the browser test below draws LR): every group
    # of this state is still to do
    mid_layout, release = held_job
    body = {"model": "file:0", "expanded": "all", "background": True,
            "direction": "TB", "attrs": True, "inits": True}
    first = client.post("/api/graph/view", json=body)
    assert first.status_code == 202
    pending = first.json()
    assert pending["pending"] is True and pending["progress"]["unit"] == "groups"
    assert pending["progress"]["phase"] in ("waiting", "layout", "answer")
    assert mid_layout.wait(30), "the job never laid out a group"
    # the job is mid-layout: a server whose small answers waited for it times out here
    small = client.post("/api/graph/view", json={**body, "expanded": ["stage3"]}, timeout=20)
    assert small.status_code == 200 and len(small.json()["nodes"]) > 200
    summary = client.get("/api/graph/summary", params={"model": "file:0"})
    assert summary.json()["counts"]["nodes"] == JOB_NODES
    found = client.get("/api/graph/search", params={"model": "file:0", "q": "block7"})
    assert found.json()["total"] > 0
    still = client.post("/api/graph/view", json=body)
    assert still.status_code == 202 and still.json()["progress"]["phase"] == "layout"
    assert still.json()["progress"]["done"] >= 1
    release.set()
    while still.status_code == 202:
        assert still.json()["progress"]["done"] >= pending["progress"]["done"]
        still = client.post("/api/graph/view", json=body)
    assert still.status_code == 200
    assert len(still.json()["nodes"]) == JOB_NODES + 2


def test_small_states_never_wait_for_a_job(client):
    response = client.post("/api/graph/view", json={"model": "file:3", "expanded": "initial",
                                                    "background": True})
    assert response.status_code == 200 and "pending" not in response.json()


# -- what the view refuses -------------------------------------------------------------------
def test_too_large_model_is_refused_with_what_was_read(client):
    for path in ("/api/graph/summary", "/api/graph/view"):
        response = client.get(path, params={"model": "file:1"})
        assert response.status_code == 422
        error = response.json()["error"]
        assert "too large" in error and f"read {MAX_NODES + 1:,}" in error
        assert f"at most {MAX_NODES:,} nodes" in error and "1 GB" in error


def test_file_that_is_no_model_is_a_clear_422(client):
    response = client.get("/api/graph/summary", params={"model": "file:2"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert "notes.onnx" in error and "neither an ONNX model nor a Paddle program" in error


@pytest.mark.browser
@pytest.mark.parametrize("model, needle", [
    ("file:1", f"model too large for the graph view: read {MAX_NODES + 1:,}"),
    ("file:2", "notes.onnx: neither an ONNX model nor a Paddle program"),
])
def test_refused_model_shows_its_message_in_the_view(browser, server, model, needle):
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(f"{server.url}/?tab=graph&graph_model={model}")
    alert = page.locator("p.graph-error[role=alert]")
    alert.wait_for(state="visible", timeout=20000)
    page.wait_for_function(f"() => document.querySelector('p.graph-error').textContent.includes({needle!r})")
    assert page.evaluate("() => window.__vdlGraph.data") is None  # nothing drawn, no hang
    # the refused answers are the only errors: nothing thrown, nothing else failed
    assert [e for e in watch.errors if "status of 422" not in e] == []
    watch.finish()
    context.close()


@pytest.mark.browser
def test_expand_all_shows_progress_then_the_whole_graph(browser, server, client, held_job):
    mid_layout, release = held_job  # the job shows its progress however fast the machine
    initial = client.get("/api/graph/view", params={"model": "file:0"}).json()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    watch = PageWatch(page)
    # horizontal: a state not laid out yet, so the job has work to show (the API test ran TB)
    page.goto(f"{server.url}/?tab=graph&graph_model=file:0&graph_dir=LR")
    page.wait_for_function(f"() => window.__vdlGraph && window.__vdlGraph.data"
                           f" && window.__vdlGraph.data.nodes.length === {len(initial['nodes'])}")
    page.evaluate("() => { window.__seen = []; const s = document.querySelector('.graph-status');"
                  " new MutationObserver(() => window.__seen.push(s.textContent))"
                  ".observe(s, {childList: true, characterData: true, subtree: true}); }")
    page.evaluate("() => { window.__vdlGraph.setExpanded('all'); }")  # not awaited: held
    assert mid_layout.wait(30), "the job never laid out a group"
    page.wait_for_function("() => window.__seen.some((s) => s.startsWith('Laying out'))")
    release.set()
    page.wait_for_function(f"() => window.__vdlGraph.data.nodes.length === {JOB_NODES + 2}",
                           timeout=120000)
    seen = page.evaluate("() => window.__seen")
    progress = [s for s in seen if s.startswith(("Laying out", "Preparing", "Waiting"))]
    assert progress, seen
    assert f"{JOB_NODES:,} of {JOB_NODES:,} ops shown" in seen[-1]
    assert watch.errors == []
    watch.finish()
    context.close()


def test_visible_edges_from_local_edges_match_every_model_edge():
    """The edges drawn, found from the groups shown, are those of the model's edges whose
    two ends stand for different boxes (each end shown by its outermost collapsed group)."""
    import random

    for model in (onnx_models.transformer(300), onnx_models.control_flow(),
                  onnx_models.residual_chain(600, blocks_per_stage=20)):
        doc = GraphDocument(parse_model(model))
        h = doc.hierarchy
        groups = sorted(p for p in h.groups if p)
        rng = random.Random(7)
        for trial in range(25):
            state = doc.expanded_set("all" if trial == 0 else
                                     rng.sample(groups, rng.randint(0, len(groups))))

            def shown(node_id: int) -> tuple:
                outer = next((p for p in h.ancestors(node_id) if p not in state), None)
                return ("n", node_id) if outer is None else ("g", outer)

            expected = {(shown(e.src), shown(e.dst), (e.src, e.tensor)) for e in h.model.edges
                        if shown(e.src) != shown(e.dst)}
            assert set(h.visible_links(state)) == expected


def test_an_answered_view_is_freed_in_slices_on_its_own_thread():
    from visualdl.kinds.graph import jobs

    boxes = [{"id": f"n{i}", "points": [[i, i]]} for i in range(3 * jobs.RELEASE_SLICE + 7)]
    edges = [{"from": "n0"}] * 5
    kept = boxes[123]
    jobs.release_later([boxes, edges])
    deadline = time.monotonic() + 30
    while (boxes or edges) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert boxes == [] and edges == []
    assert kept == {"id": "n123", "points": [[123, 123]]}  # what others hold stays whole
    assert any(t.name == "graph-release" for t in threading.enumerate())
