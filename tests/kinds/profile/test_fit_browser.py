"""A profile of real training (``Model.fit`` on the digits, recorded by ``vf.profiler``)
in Chromium: the overview's bars sum to each step's time in the trace, the operator table's
calls and totals equal counts and sums over the trace's events, the timeline draws, the
memory pane shows the trace's peak, and two runs compare."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest

from tests.helpers.server import serving
from tests.kinds.profile.test_browser import open_profiler, pane
from visualdl import LogReader

pytestmark = pytest.mark.browser
pytest.importorskip("numba")


@pytest.fixture(scope="module")
def fit_logdir(tmp_path_factory):
    from tests.framework.profiler.digits import fit_model

    logdir = tmp_path_factory.mktemp("fits")
    fit_model(str(logdir / "mlp_a"), profile_steps=(2, 5), record_shapes=True,
              profile_memory=True)
    fit_model(str(logdir / "mlp_b"), profile_steps=(2, 4))
    return logdir


@pytest.fixture(scope="module")
def fit_server(fit_logdir):
    with serving(str(fit_logdir)) as handle:
        yield handle


def _trace(logdir, run):
    reader = LogReader(str(logdir))
    (ref,) = reader.blobs(run, "profile", "worker0")
    return json.loads(gzip.decompress(reader.load(ref).trace_gz))


def test_fit_profile_views(watched, fit_server, fit_logdir):
    trace = _trace(fit_logdir, "mlp_a")
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in complete if e["cat"] == "ProfileStep"]
    page = open_profiler(watched, fit_server, run="mlp_a", tag="worker0")
    # overview: one stacked bar per step; the parts add up to the step's time in the trace
    page.wait_for_function("() => { const p = document.querySelector('.prof-overview .plot');"
                           " return p && p.data && p.data.length > 0; }")
    bars = page.evaluate("() => document.querySelector('.prof-overview .plot').data"
                         ".map((t) => t.y)")
    assert len(bars[0]) == len(steps) == 3
    for i, step in enumerate(steps):
        assert sum(ys[i] for ys in bars) * 1000 == pytest.approx(step["dur"], rel=0.01)
    # operators: calls and total time per name, as counted in the trace (forward and backward)
    pane(page, "operators")
    expected = defaultdict(lambda: [0, 0.0])
    for e in complete:
        if e["cat"] in ("Operator", "Backward") and "Sequence number" in e.get("args", {}):
            expected[e["name"]][0] += 1
            expected[e["name"]][1] += e["dur"]
    shown = page.locator(".prof-operators tbody tr").evaluate_all(
        "(rows) => rows.map((r) => [r.dataset.name,"
        " Number(r.querySelector('[data-key=calls]').dataset.value),"
        " Number(r.querySelector('[data-key=total]').dataset.value)])")
    assert {n: c for n, c, _ in shown} == {n: v[0] for n, v in expected.items()}
    for name, _, total in shown:
        assert total == pytest.approx(expected[name][1], rel=1e-6)
    assert any(n.endswith("_grad") for n, _, _ in shown)
    # timeline: pixels on the canvas
    pane(page, "timeline")
    page.wait_for_function("() => document.querySelector('.prof-canvas').dataset.state === 'ready'")
    painted = page.locator(".prof-canvas").evaluate(
        "(c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }")
    assert painted > 1000
    # memory: the peak of the running total the trace's [memory] events carry
    pane(page, "memory")
    page.wait_for_function("() => { const p = document.querySelector('.prof-memory .plot');"
                           " return p && p.data && p.data.length >= 1; }")
    totals = [e["args"]["Total Allocated"] for e in trace["traceEvents"]
              if e.get("name") == "[memory]"]
    ys = page.evaluate("() => document.querySelector('.prof-memory .plot').data[0].y")
    assert totals and max(ys) == pytest.approx(max(totals))
    # compare with the other run
    pane(page, "compare")
    page.select_option("select[name=compare-run]", "mlp_b")
    page.wait_for_function("() => { const p = document.querySelector('.prof-compare');"
                           " const s = document.querySelector('select[name=compare-run]');"
                           " return p && p.dataset.state === 'ready' && s && s.value === 'mlp_b'; }")
    assert page.locator(".prof-compare tbody tr").count() >= len(expected) // 2
