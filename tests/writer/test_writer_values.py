"""Issue 13, items 3 and 11: every value the writer accepts is stored (histograms of huge
or constant values included), and what it cannot store is refused at the call, naming the
tag. Nothing accepted may vanish with only a warning from the writer thread."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogReader, LogWriter

MAX = np.finfo(np.float64).max

HUGE_OR_CONSTANT = {
    "const_1e16": [1e16] * 4,
    "const_1e308": [1e308] * 2,
    "const_max": [MAX] * 3,
    "plus_minus_1e308": [1e308, -1e308],
    "plus_minus_max": [MAX, -MAX],
    "squares_overflow": [1e200, 2e200],
    "subnormal": [5e-324, 1e-323],
    "const_zero": [0.0] * 5,
}


def _exact_mean_std(values: list[float]) -> tuple[float, float]:
    """Reference statistics at a power-of-two scale (exact for these values)."""
    v = np.asarray(values, dtype=np.float64) * 2.0**-600
    return float(v.mean()) * 2.0**600, float(v.std()) * 2.0**600


def _record(tmp_path, calls) -> tuple[LogReader, list]:
    """Write with ``calls(writer)``, collecting every warning from any thread."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with LogWriter(logdir=str(tmp_path)) as w:
            calls(w)
    return LogReader(str(tmp_path)), [str(c.message) for c in caught]


def test_histograms_of_huge_or_constant_values_are_stored(tmp_path):
    def calls(w):
        for tag, values in HUGE_OR_CONSTANT.items():
            w.add_histogram(tag, values, step=1, buckets=10)

    r, caught = _record(tmp_path, calls)
    assert caught == []
    run = r.runs()[0]
    assert r.errors == 0, r.error_messages
    assert sorted(r.tags(run)["histogram"]) == sorted(HUGE_OR_CONSTANT)
    for tag, values in HUGE_OR_CONSTANT.items():
        (h,) = r.histograms(run, tag)
        assert h.counts.sum() == len(values) == h.count, tag
        assert np.isfinite(h.edges).all() and (np.diff(h.edges) >= 0).all(), tag
        assert h.edges[0] <= min(values) and max(values) <= h.edges[-1], tag
        assert (h.min, h.max) == (min(values), max(values)), tag
        mean, std = _exact_mean_std(values)
        assert math.isfinite(h.mean) and math.isfinite(h.std), tag
        assert h.mean == pytest.approx(mean, rel=1e-12, abs=1e-323), tag
        assert h.std == pytest.approx(std, rel=1e-12, abs=1e-323), tag
    # a constant gets a bucket around it: the value is inside, not on a zero-width edge
    (c,) = r.histograms(run, "const_1e16")
    assert c.edges[0] < 1e16 < c.edges[-1] and c.std == 0.0


def test_histogram_api_answers_huge_values(tmp_path):
    """add_histogram("h", [1e200, 2e200]) used to be a 500 on /api/histograms."""
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        for tag, values in HUGE_OR_CONSTANT.items():
            w.add_histogram(tag, values, step=1, buckets=10)
    with serving(tmp_path) as server:
        client = Client(server.url)
        for tag, values in HUGE_OR_CONSTANT.items():
            body = client.json("/api/histograms", run="run", tag=tag)
            (entry,) = body["entries"]
            mean, std = _exact_mean_std(values)
            assert entry["mean"] == pytest.approx(mean, rel=1e-12, abs=1e-323), tag
            assert entry["std"] == pytest.approx(std, rel=1e-12, abs=1e-323), tag
            assert sum(entry["counts"]) == len(values)
            dist = client.json("/api/distributions", run="run", tag=tag)
            assert dist["values"][0] == [min(values)] and dist["values"][-1] == [max(values)]
        client.close()


def test_random_magnitudes_never_fail_in_the_writer_thread(tmp_path):
    """Seeded fuzz over magnitudes from subnormal to the float maximum, with and without
    NaN and infinities: every call is stored, no warning from any thread."""
    rng = random.Random(13)
    cases = []
    for i in range(200):
        n = rng.choice([1, 2, 3, 7, 100])
        exps = [rng.choice([-323, -300, -10, 0, 10, 150, 154, 155, 200, 300, 308]) for _ in range(n)]
        vals = [rng.choice([-1, 1]) * rng.uniform(1, 1.79) * 10.0**min(e, 307) for e in exps]
        if rng.random() < 0.2:
            vals[0] = rng.choice([math.nan, math.inf, -math.inf])
        cases.append((f"h{i}", vals, rng.choice([1, 2, 30, 1000])))

    def calls(w):
        for tag, vals, buckets in cases:
            w.add_histogram(tag, vals, step=0, buckets=buckets)

    r, caught = _record(tmp_path, calls)
    assert caught == [] and r.errors == 0, (caught, r.error_messages)
    run = r.runs()[0]
    for tag, vals, buckets in cases:
        (h,) = r.histograms(run, tag)
        finite = [v for v in vals if math.isfinite(v)]
        assert h.counts.sum() == len(finite) and len(h.counts) == buckets
        assert h.nonfinite == len(vals) - len(finite)
        assert math.isfinite(h.mean) and math.isfinite(h.std) and h.std >= 0
        if finite:
            assert min(finite) <= h.mean <= max(finite)


def test_text_over_2_gib_is_refused_at_the_call(tmp_path):
    """Protobuf cannot serialize it: it used to vanish in the writer thread with a warning
    ("Failed to serialize proto") while close() succeeded."""
    huge = "x" * (2**31)
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_text("notes", "kept", 0)
        with pytest.raises(ValueError, match="'notes': text_string is 2.00 GiB"):
            w.add_text("notes", huge, 1)
        del huge
        w.add_text("notes", "kept too", 2)
    r = LogReader(str(tmp_path))
    assert [t.text for t in r.texts(r.runs()[0], "notes")] == ["kept", "kept too"]


@pytest.mark.parametrize("walltime", [math.nan, np.float64("nan"), math.inf,
                                      np.float32("-inf"), 2**1100],
                         ids=["nan", "np-nan", "inf", "np-ninf", "2**1100"])
def test_non_finite_walltime_is_one_rule_refused(tmp_path, walltime):
    with LogWriter(logdir=str(tmp_path)) as w:
        with pytest.raises(ValueError, match="'loss': walltime"):
            w.add_scalar("loss", 1.0, 0, walltime)
        with pytest.raises(ValueError, match="'t': walltime"):
            w.add_text("t", "x", 0, walltime)
        w.add_scalar("loss", 2.0, 1)
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "loss").values.tolist() == [2.0]


class _SelfItem:
    """An object whose ``.item()`` returns itself (used to recurse without end)."""

    def item(self):
        return self


@pytest.mark.parametrize("value,exc,match", [
    (2**1100, ValueError, "'loss': value 1"),
    (-(2**1100), ValueError, "'loss': value -1"),
    (np.array(2**1100, dtype=object), ValueError, "too large for a float"),
    (_SelfItem(), TypeError, r"'loss': value.item\(\) must give a real number"),
], ids=["2**1100", "-2**1100", "object-array", "item-returns-self"])
def test_bad_scalar_values_name_the_tag(tmp_path, value, exc, match):
    with LogWriter(logdir=str(tmp_path)) as w:
        with pytest.raises(exc, match=match):
            w.add_scalar("loss", value, 0)
        with pytest.raises(exc, match=match.replace("'loss'", "'m/loss'")):
            w.add_scalars("m", {"loss": value}, 1)
        w.add_scalar("loss", 3.0, 2)
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "loss").values.tolist() == [3.0]


def test_huge_int_hparam_is_refused_at_the_call(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with LogWriter(logdir=str(tmp_path)) as w:
            with pytest.raises(ValueError, match=r"hparams_dict\['n'\] = 1\d+ is too large"):
                w.add_hparams({"n": 2**1100}, ["loss"])
            w.add_hparams({"n": 2**70, "lr": 0.1}, ["loss"])
    assert caught == []
    r = LogReader(str(tmp_path))
    assert r.hparams(r.runs()[0]).hparams == {"n": float(2**70), "lr": 0.1}


def test_embedding_metadata_that_cannot_be_utf8_is_refused_at_the_call(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with LogWriter(logdir=str(tmp_path)) as w:
            with pytest.raises(ValueError, match="'emb': metadata is not valid Unicode"):
                w.add_embeddings("emb", np.eye(2), ["ok", "bad\udc80"])
            w.add_embeddings("emb", np.eye(2), ["a", "b"], step=1)
    assert caught == []
    r = LogReader(str(tmp_path))
    assert [e.step for e in r.embeddings(r.runs()[0], "emb")] == [1]


def test_graph_file_removed_after_the_call_is_still_recorded(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"\x08\x07")  # any bytes: the writer does not parse ONNX
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with LogWriter(logdir=str(tmp_path / "run"), flush_secs=60) as w:
            w.add_graph(str(model))
            model.unlink()
    assert caught == []
    r = LogReader(str(tmp_path / "run"))
    (ref,) = r.graphs(r.runs()[0], "model")
    assert r.load(ref).onnx == b"\x08\x07"
