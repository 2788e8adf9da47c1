"""The system metrics sampler of a real LogWriter: real psutil readings checked against
psutil and os directly, read back from the real log files; the GPU part through a test
double of pynvml (fake_nvml); stopping at once on close; failures that never reach
training."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import threading
import uuid

import numpy as np
import pytest

from tests.helpers.http import wait_for
from tests.kinds.system import fake_nvml
from visualdl import LogReader, LogWriter, SummaryWriter

psutil = pytest.importorskip("psutil")

HOST = socket.gethostname().replace("/", "_")
HOST_METRICS = {"process/cpu_percent", "process/rss_bytes", "cpu/percent", "memory/percent",
                "memory/used_bytes", "disk/free_bytes"}
THREAD = "visualdl-system-metrics"


_OLDER: set[threading.Thread] = set()  # samplers of writers other tests left open


def _samplers() -> list[threading.Thread]:
    """The sampler threads alive that the test running now started."""
    return [t for t in threading.enumerate() if t.name == THREAD and t not in _OLDER]


@pytest.fixture(autouse=True)
def _older_samplers():
    _OLDER.clear()
    _OLDER.update(t for t in threading.enumerate() if t.name == THREAD)


def _system(logdir, run="run") -> dict[str, object]:
    reader = LogReader(str(logdir))
    try:
        tags = reader.tags(run).get("system", [])
    except KeyError:
        return {}
    prefix = f"system/{HOST}/"
    return {t[len(prefix):]: reader.scalars(run, t) for t in tags}


def _until_samples(writer, logdir, n, run="run", metric="cpu/percent"):
    def enough():
        writer.flush()
        found = _system(logdir, run)
        return found if metric in found and len(found[metric].steps) >= n else None
    return wait_for(enough, timeout=60)


@pytest.fixture
def memory_url() -> str:
    pytest.importorskip("fsspec", reason="memory:// logdirs need fsspec (test extra)")
    return f"memory://vdl-tests/{uuid.uuid4().hex[:12]}"


@pytest.fixture
def no_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml fails: no GPU part


def test_samples_are_real_readings_of_this_process_and_machine(tmp_path, no_nvml):
    logdir = tmp_path / "run"
    rss = [psutil.Process().memory_info().rss]
    with LogWriter(logdir=str(logdir), system_metrics=0.05) as w:
        assert len(_samplers()) == 1
        for step in range(100):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        found = _until_samples(w, tmp_path, 3)
        rss.append(psutil.Process().memory_info().rss)
        free = shutil.disk_usage(logdir).free
    assert HOST_METRICS <= set(found)
    steps = found["cpu/percent"].steps
    np.testing.assert_array_equal(steps, np.arange(len(steps)))
    sampled_rss = found["process/rss_bytes"].values
    assert np.all(sampled_rss >= min(rss) * 0.8) and np.all(sampled_rss <= max(rss) * 1.2)
    assert abs(found["disk/free_bytes"].values[-1] - free) < max(0.02 * free, 256 << 20)
    total = psutil.virtual_memory().total
    assert np.all(found["memory/used_bytes"].values <= total)
    assert np.all((found["memory/percent"].values >= 0) & (found["memory/percent"].values <= 100))
    assert np.all((found["cpu/percent"].values >= 0) & (found["cpu/percent"].values <= 100))
    cores = psutil.cpu_count() or 1
    assert np.all(found["process/cpu_percent"].values <= 100.0 * cores + 1)
    for counter in ("disk/read_bytes", "disk/write_bytes", "network/sent_bytes",
                    "network/recv_bytes"):
        if counter in found:  # some containers have no disk counters
            values = found[counter].values
            assert np.all(values >= 0) and np.all(np.diff(values) >= 0), counter
    walls = found["cpu/percent"].wall_times
    assert np.all(np.diff(walls) > 0)
    loss = LogReader(str(tmp_path)).scalars("run", "loss")
    assert loss.steps.tolist() == list(range(100))  # training's points are all there
    assert _samplers() == []


def test_close_stops_the_sampler_at_once(tmp_path, no_nvml):
    """An hour between samples: close() must not wait for the next one (the thread waits
    on an Event), and leaves no thread behind."""
    w = LogWriter(logdir=str(tmp_path / "run"), system_metrics=3600)
    assert len(_samplers()) == 1
    w.add_scalar("loss", 1.0, 0)
    w.close()
    assert _samplers() == []
    assert _system(tmp_path) == {}


def test_false_samples_nothing(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run"), system_metrics=False) as w:
        assert _samplers() == []
        w.add_scalar("loss", 1.0, 0)
    assert LogReader(str(tmp_path)).tags("run") == {"scalar": ["loss"]}


@pytest.mark.parametrize("bad", [-1, -0.5, float("nan"), float("inf"), "10", [10]])
def test_a_bad_interval_is_named(tmp_path, bad):
    with pytest.raises(ValueError, match="system_metrics"):
        LogWriter(logdir=str(tmp_path / "run"), system_metrics=bad)
    assert _samplers() == []


def test_gpus_through_nvml(tmp_path, monkeypatch):
    nvml = fake_nvml.module()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    with LogWriter(logdir=str(tmp_path / "run"), system_metrics=0.05) as w:
        found = _until_samples(w, tmp_path, 2, metric="gpu1/temperature_c")
    gib = fake_nvml.GIB
    expected = {
        "gpu0/utilization_percent": 37.0, "gpu0/memory_used_bytes": 3.0 * gib,
        "gpu0/memory_total_bytes": 80.0 * gib, "gpu0/power_watts": 123.456,
        "gpu0/temperature_c": 61.0, "gpu0/sm_clock_mhz": 1980.0,
        "gpu0/memory_clock_mhz": 2619.0,
        "gpu1/utilization_percent": 99.0, "gpu1/memory_used_bytes": 5.0 * gib,
        "gpu1/memory_total_bytes": 80.0 * gib, "gpu1/temperature_c": 70.0,
        "gpu1/sm_clock_mhz": 1980.0, "gpu1/memory_clock_mhz": 2619.0,
    }
    got = {m: s.values[0] for m, s in found.items() if m.startswith("gpu")}
    assert got == expected  # gpu1/power_watts: not supported, so not recorded
    assert HOST_METRICS <= set(found)
    assert nvml.state["shutdown"] == 1  # NVML let go on close


def test_no_gpu_library_is_one_debug_line(tmp_path, no_nvml, caplog):
    with caplog.at_level(logging.DEBUG, logger="visualdl.system"):
        with LogWriter(logdir=str(tmp_path / "run"), system_metrics=0.05) as w:
            found = _until_samples(w, tmp_path, 2)
    assert not any(m.startswith("gpu") for m in found)
    lines = [r for r in caplog.records if r.name == "visualdl.system"]
    assert [(r.levelno, "GPUs are not sampled" in r.getMessage()) for r in lines] == \
        [(logging.DEBUG, True)]


def test_a_failing_reading_is_logged_once_and_loses_nothing(tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml.module(broken_memory=True))
    with caplog.at_level(logging.WARNING, logger="visualdl.system"):
        with LogWriter(logdir=str(tmp_path / "run"), system_metrics=0.02) as w:
            for step in range(2000):
                w.add_scalar("loss", float(step), step)
            found = _until_samples(w, tmp_path, 5)
            for step in range(2000, 4000):
                w.add_scalar("loss", float(step), step)
    warnings = [r for r in caplog.records if r.name == "visualdl.system"]
    assert len(warnings) == 1 and "reading failed" in warnings[0].getMessage()
    assert HOST_METRICS <= set(found)  # the host's readings go on
    assert not any(m.startswith("gpu") for m in found)
    loss = LogReader(str(tmp_path)).scalars("run", "loss")
    np.testing.assert_array_equal(loss.steps, np.arange(4000))
    np.testing.assert_array_equal(loss.values, np.arange(4000.0))


def test_object_storage_logdir_samples_no_free_space(memory_url, no_nvml):
    run = memory_url + "/run"
    with LogWriter(logdir=run, system_metrics=0.05) as w:
        found = _until_samples(w, memory_url, 2)
    assert "disk/free_bytes" not in found
    assert HOST_METRICS - {"disk/free_bytes"} <= set(found)


def test_summary_writer_passes_it_through_to_its_main_run_only(tmp_path, no_nvml):
    with SummaryWriter(str(tmp_path / "run"), system_metrics=0.05) as w:
        w.add_scalars("loss", {"train": 1.0, "val": 2.0}, 0)
        found = _until_samples(w, tmp_path, 2)
        assert len(_samplers()) == 1  # not one per add_scalars run
    assert HOST_METRICS <= set(found)
    reader = LogReader(str(tmp_path))
    others = [r for r in reader.runs() if r != "run"]
    assert others and all("system" not in reader.tags(r) for r in others)


def test_the_training_callback_passes_it_through(tmp_path, no_nvml):
    pytest.importorskip("numba")
    import visualdl.framework as vf
    from tests.framework.training.toy_data import blobs, mlp
    from visualdl.framework.callbacks import Callback, VisualDL

    class WaitForSamples(Callback):  # runs before VisualDL's on_train_end closes the writer
        def on_train_end(self, logs=None):
            _until_samples(cb.writer, tmp_path, 1)

    x, y = blobs(32)
    net = mlp()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    cb = VisualDL(str(tmp_path / "run"), log_graph=False, histogram_freq=0,
                  system_metrics=0.05)
    model.fit((x, y), batch_size=16, epochs=1, verbose=0, callbacks=[WaitForSamples(), cb])
    assert cb.writer is None and _samplers() == []
    assert HOST_METRICS <= set(_system(tmp_path))
