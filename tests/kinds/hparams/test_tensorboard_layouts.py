"""Hyper-parameters laid out as TensorBoard's HParams dashboard expects, served by
``/api/hparams`` as that dashboard shows them.

Two layouts, each from its real writer:

* TensorFlow's own ``hparams`` API (``data/tf_sweep``, written by ``make_tf_sweep.py`` with
  tensorflow-cpu 2.21.0 and tensorboard 2.21.0): the experiment (``hp.hparams_config``:
  hyper-parameters with domains, metrics) in the parent folder, each trial's session in a
  sub-folder, a metric of the group ``validation`` in the trial's ``validation`` sub-folder.
  The experiment's metrics apply to every trial below it; the parent folder is no run.
* torch's ``add_hparams`` layout, as tensorboardX 2.x writes it (the same events, written by
  the installed tensorboardX): experiment, session and metric scalars in one sub-folder per
  call.

The reference is TensorBoard's own reading of the same files: ``EventAccumulator`` (every
size guidance at 0) for each run's hparams plugin data, parsed by
``tensorboard.plugins.hparams.metadata``, and each metric's last value at the run and tag
where TensorBoard's ``metrics.run_tag_from_session_and_metric`` looks for it.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
metadata = pytest.importorskip("tensorboard.plugins.hparams.metadata")
tensor_util = pytest.importorskip("tensorboard.util.tensor_util")

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_sweep")


def _accumulator(path: str):
    acc = ea.EventAccumulator(path, size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


def _value(v):
    which = v.WhichOneof("kind")
    return getattr(v, which)


def _reference(root: str) -> tuple[dict, dict, list[str]]:
    """TensorBoard's view: ({session run: {hparams, metrics}}, domains, metric names)."""
    experiment, sessions, last = None, {}, {}
    for folder, _, files in os.walk(root):
        if not any("tfevents" in f for f in files):
            continue
        run = os.path.relpath(folder, root)
        acc = _accumulator(folder)
        try:
            contents = acc.PluginTagToContent("hparams")
        except KeyError:  # no hparams in this run
            contents = {}
        for tag, content in contents.items():
            if tag == metadata.EXPERIMENT_TAG:
                experiment = metadata.parse_experiment_plugin_data(content)
            elif tag == metadata.SESSION_START_INFO_TAG:
                info = metadata.parse_session_start_info_plugin_data(content)
                sessions[run] = {k: _value(v) for k, v in info.hparams.items()}
        for tag in acc.Tags()["tensors"]:
            events = acc.Tensors(tag)
            value = tensor_util.make_ndarray(events[-1].tensor_proto) if events else None
            if value is not None and value.dtype.kind == "f" and value.ndim == 0:
                last[(run, tag)] = float(value)  # the scalars plugin's
        for tag in acc.Tags()["scalars"]:
            last[(run, tag)] = acc.Scalars(tag)[-1].value
    domains = {}
    for info in experiment.hparam_infos:
        which = info.WhichOneof("domain")
        if which == "domain_interval":
            domains[info.name] = {"min": info.domain_interval.min_value,
                                  "max": info.domain_interval.max_value}
        elif which == "domain_discrete":
            domains[info.name] = {"values": [_value(v) for v in info.domain_discrete.values]}
    names, rows = [], {}
    for m in experiment.metric_infos:
        names.append(f"{m.name.group}/{m.name.tag}" if m.name.group else m.name.tag)
    for run, hparams in sessions.items():
        metrics = {}
        for m, name in zip(experiment.metric_infos, names):
            where = os.path.normpath(os.path.join(run, m.name.group))  # TensorBoard's rule
            metrics[name] = last.get((where, m.name.tag))
        rows[run] = {"hparams": hparams, "metrics": metrics}
    return rows, domains, names


def _served(logdir: str) -> tuple[dict, dict]:
    with serving([logdir]) as handle:
        client = Client(handle.url)
        r = client.get("/api/hparams")
        assert r.status_code == 200
        tags = client.get("/api/tags")
        assert tags.status_code == 200
        runs = client.json("/api/runs")
        assert sorted(runs["states"]) == runs["runs"]
        return r.json(), {**tags.json(), "runs": runs["runs"]}


def test_tf_hparams_api_sweep_matches_tensorboard(tmp_path):
    logdir = shutil.copytree(DATA, tmp_path / "tf_sweep")
    want, domains, names = _reference(str(logdir))
    assert len(want) == 8 and names == ["accuracy", "validation/loss"]
    body, tags = _served(str(logdir))
    assert body["metric_names"] == names
    assert body["hparam_names"] == ["dropout", "num_units", "optimizer"]
    assert body["domains"] == domains == {
        "dropout": {"min": 0.1, "max": 0.2}, "num_units": {"values": [16.0, 32.0]},
        "optimizer": {"values": ["adam", "sgd"]}}
    got = {row["run"]: row for row in body["runs"]}
    assert sorted(got) == sorted(want)
    for run, ref in want.items():
        assert got[run]["hparams"] == pytest.approx(ref["hparams"])
        assert got[run]["metrics"] == pytest.approx(ref["metrics"])
        assert None not in got[run]["metrics"].values()
    # the parent folder holds only the experiment: no run of any view
    shown = {run for runs in tags["kinds"].values() for run in runs}
    assert "tf_sweep" not in shown and "run-0" in shown
    assert sorted(tags["kinds"]["hparams"]) == sorted(want)
    assert tags["runs"] == sorted(shown)  # nor listed as a run without data


def test_torch_add_hparams_layout_matches_tensorboard(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    with tbx.SummaryWriter(str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss", 1.0 - step / 10, step)
        for i, (lr, opt) in enumerate([(0.1, "adam"), (0.01, "sgd"), (0.001, "adam")]):
            w.add_hparams({"lr": lr, "optimizer": opt, "layers": i + 1},
                          {"hparam/accuracy": 0.5 + i / 10, "hparam/loss": 1.0 - i / 10},
                          name=f"trial-{i}")
    want, _, names = _reference(str(tmp_path))
    body, tags = _served(str(tmp_path))
    assert body["metric_names"] == names == ["hparam/accuracy", "hparam/loss"]
    got = {row["run"]: row for row in body["runs"]}
    assert sorted(got) == sorted(want) == ["trial-0", "trial-1", "trial-2"]
    for run, ref in want.items():
        assert got[run]["hparams"] == pytest.approx(ref["hparams"])
        assert got[run]["metrics"] == pytest.approx(ref["metrics"])
    assert body["domains"] == {}  # add_hparams declares none
    assert tmp_path.name in tags["kinds"]["scalar"]  # the parent's own scalars: a run


def test_log_reader_gives_each_trial_the_experiments_metrics_and_domains(tmp_path):
    """``LogReader.hparams(run)``: a trial's session with the metrics and domains the
    experiment above it declares, as ``/api/hparams`` and TensorBoard show them."""
    from visualdl import LogReader

    logdir = shutil.copytree(DATA, tmp_path / "tf_sweep")
    want, domains, names = _reference(str(logdir))
    reader = LogReader(str(logdir))
    for run, ref in want.items():
        event = reader.hparams(run)
        assert event.hparams == pytest.approx(ref["hparams"])
        assert list(event.metric_tags) == names == ["accuracy", "validation/loss"]
        assert event.domains == domains
        assert not event.declaration
