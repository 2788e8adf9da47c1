"""The VisualDL callback, read back with LogReader from a real logdir: exactly the documented
tags, with the values fit produced; one writer process only; LogWriter.add_graph on a layer."""

import numpy as np
import onnx
import pytest
from .toy_data import blobs, cnn, images, mlp

import visualdl.framework as vf
from visualdl import LogReader, LogWriter
from visualdl.framework.callbacks import Callback, VisualDL


class KeepLogs(Callback):
    def __init__(self):
        self.train, self.lrs = [], []

    def on_train_batch_end(self, step, logs=None):
        self.train.append(dict(logs))
        self.lrs.append(self.model.optimizer.get_lr())


def _graph(reader, run):
    refs = reader.graphs(run, "model")
    assert len(refs) == 1
    return onnx.load_from_string(reader.load(refs[0]).onnx)


def test_logdir_holds_exactly_the_documented_tags(tmp_path):
    x, y = images(48)
    net = cnn()
    sched = vf.optim.StepLR(0.02, step_size=4, gamma=0.5)
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), sched), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy(topk=(1, 2)))
    keep = KeepLogs()
    # system_metrics off: a slow machine could take a sample (its own tags: test_sampler.py)
    cb = VisualDL(str(tmp_path / "run"), histogram_freq=2, hparams={"note": "test"},
                  system_metrics=False)
    result = model.fit((x, y), (x[:20], y[:20]), batch_size=16, epochs=3, verbose=0,
                       callbacks=[cb, keep])
    assert cb.writer is None  # closed at the end of training
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["run"]
    params = [name for name, _ in net.named_parameters()]
    metrics = ["loss", "acc_top1", "acc_top2"]
    tags = reader.tags("run")
    assert {k: sorted(v) for k, v in tags.items()} == {
        "scalar": sorted([f"train/{m}" for m in metrics] + ["train/lr"]
                         + [f"eval/{m}" for m in metrics]),
        "histogram": sorted([f"weights/{p}" for p in params] + [f"grads/{p}" for p in params]),
        "image": ["inputs/samples"],
        "graph": ["model"],
        "hparams": ["hparams"],
        "config": ["config"],
    }
    steps = np.arange(1, 10)  # 3 epochs x 3 batches
    loss = reader.scalars("run", "train/loss")
    np.testing.assert_array_equal(loss.steps, steps)
    np.testing.assert_allclose(loss.values, [d["loss"] for d in keep.train], rtol=1e-6)
    np.testing.assert_allclose(reader.scalars("run", "train/acc_top2").values,
                               [d["acc_top2"] for d in keep.train])
    np.testing.assert_allclose(reader.scalars("run", "train/lr").values, keep.lrs)
    assert keep.lrs == pytest.approx([0.02] * 4 + [0.01] * 4 + [0.005])
    ev = reader.scalars("run", "eval/acc_top1")
    np.testing.assert_array_equal(ev.steps, [3, 6, 9])
    assert ev.values[-1] == pytest.approx(result["acc_top1"])
    assert reader.scalars("run", "eval/loss").values[-1] == pytest.approx(result["loss"])
    hist = reader.histograms("run", "weights/5.weight")
    assert [h.step for h in hist] == [1, 3, 5, 7, 9]
    w = net[5].weight.numpy()
    assert hist[-1].min == pytest.approx(float(w.min())) and hist[-1].max == pytest.approx(float(w.max()))
    assert int(hist[-1].counts.sum()) == w.size
    grads = reader.histograms("run", "grads/0.weight")
    assert [h.step for h in grads] == [1, 3, 5, 7, 9] and grads[0].max > grads[0].min
    images_ = reader.images("run", "inputs/samples")
    assert [im.step for im in images_] == [1, 4, 7]
    img = reader.load(images_[0])
    assert img.channels == 1 and img.height >= 32 and img.width >= 32
    hp = reader.hparams("run")
    assert hp.hparams == {"optimizer": "Adam", "lr": 0.02, "batch_size": 16, "epochs": 3,
                          "model_params": sum(p.numel() for p in net.parameters()),
                          "note": "test"}
    assert list(hp.metric_tags) == [f"eval/{m}" for m in metrics]
    graph = _graph(reader, "run")
    onnx.checker.check_model(graph, full_check=True)
    assert [n.name for n in graph.graph.node] == ["0", "1", "2", "3", "4", "5"]
    assert graph.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_without_eval_or_images_and_with_parts_off(tmp_path):
    x, y = blobs(32)
    net = mlp()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    model.fit((x, y), batch_size=16, epochs=1, verbose=0,
              callbacks=[VisualDL(str(tmp_path / "a"))])
    model.fit((x, y), batch_size=16, epochs=1, verbose=0,
              callbacks=[VisualDL(str(tmp_path / "b"), histogram_freq=0, log_graph=False)])
    reader = LogReader(str(tmp_path))
    a = reader.tags("a")
    assert sorted(a) == ["config", "graph", "histogram", "hparams", "scalar"]  # no image
    assert sorted(a["scalar"]) == ["train/loss", "train/lr"]
    assert list(reader.hparams("a").metric_tags) == ["train/loss"]
    assert [h.step for h in reader.histograms("a", "weights/0.bias")] == [1]
    assert sorted(reader.tags("b")) == ["config", "hparams", "scalar"]


def test_standalone_evaluate_logs_eval_scalars(tmp_path):
    x, y = blobs(32)
    model = vf.Model(mlp())
    model.prepare(None, vf.nn.CrossEntropyLoss(), vf.metric.Accuracy())
    cb = VisualDL(str(tmp_path / "ev"))
    out = model.evaluate((x, y), batch_size=16, verbose=0, callbacks=[cb])
    assert cb.writer is None
    reader = LogReader(str(tmp_path))
    assert sorted(reader.tags("ev")["scalar"]) == ["eval/acc", "eval/loss"]
    assert reader.scalars("ev", "eval/acc").values[0] == pytest.approx(out["acc"])


def test_rank_1_writes_its_scalars_and_nothing_heavy(tmp_path, monkeypatch):
    """A data-parallel worker other than rank 0: its own rank-tagged file with its scalars
    (and its throughput); histograms, graph, images, hparams and config are rank 0's."""
    x, y = blobs(16)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    model = vf.Model(mlp())
    model.prepare(vf.optim.SGD(model.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    cb = VisualDL(str(tmp_path / "run"), histogram_freq=1, system_metrics=False)
    keep = KeepLogs()
    model.fit((x, y), batch_size=4, epochs=1, verbose=0, callbacks=[cb, keep])
    reader = LogReader(str(tmp_path))
    assert reader.ranks("run") == [1]
    assert {k: sorted(v) for k, v in reader.tags("run").items()} == {
        "scalar": ["train/loss", "train/lr", "train/samples_per_sec"], "workers": ["workers"]}
    loss = reader.scalars("run", "train/loss", rank=1)
    np.testing.assert_allclose(loss.values, [d["loss"] for d in keep.train], rtol=1e-6)
    speed = reader.scalars("run", "train/samples_per_sec", rank=1)
    assert list(speed.steps) == [2, 3, 4] and all(v > 0 for v in speed.values)
    monkeypatch.setenv("RANK", "0")
    assert VisualDL(str(tmp_path / "w0")).heavy


def test_log_writer_add_graph_traces_a_framework_layer(tmp_path):
    net = cnn()
    with LogWriter(logdir=str(tmp_path / "g")) as writer:
        writer.add_graph(net, input_spec=[vf.jit.InputSpec([None, 1, 8, 8], "float32", "image")])
        writer.add_graph(net, tag="from_tensor", input_spec=vf.randn((2, 1, 8, 8)))
        with pytest.raises(ValueError, match="input_spec"):
            writer.add_graph(net)
    reader = LogReader(str(tmp_path))
    assert sorted(reader.tags("g")["graph"]) == ["from_tensor", "model"]
    graph = _graph(reader, "g")
    onnx.checker.check_model(graph, full_check=True)
    assert [i.name for i in graph.graph.input] == ["image"]
    assert {i.name for i in graph.graph.initializer} >= {"0.weight", "1.running_mean", "5.bias"}


def test_activation_layers_option_logs_activation_statistics(tmp_path):
    x, y = images(32)
    net = cnn()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.05), vf.nn.CrossEntropyLoss())
    model.fit((x, y), (x, y), batch_size=16, epochs=2, verbose=0,
              callbacks=[VisualDL(str(tmp_path / "act"), histogram_freq=3,
                                  activation_layers=["2"])])
    reader = LogReader(str(tmp_path))
    tags = reader.tags("act")
    assert "activations/2" in tags["histogram"]
    act = sorted(t for t in tags["scalar"] if t.startswith("activations/"))
    assert act == ["activations/2/mean", "activations/2/std", "activations/2/zero_fraction"]
    zeros = reader.scalars("act", "activations/2/zero_fraction")
    np.testing.assert_array_equal(zeros.steps, [1, 4])  # train batches only, every 3 steps
    assert np.all((zeros.values > 0) & (zeros.values < 1))  # a ReLU output: some zeros
    assert not net[2].__dict__.get("_forward_hooks")  # removed when training ended


def test_a_graph_that_cannot_be_exported_warns_and_training_goes_on(tmp_path):
    x, y = blobs(16)
    vf.seed(0)
    net = vf.nn.Sequential(vf.nn.Linear(6, 4), vf.nn.BatchNorm1D(4, track_running_stats=False),
                           vf.nn.Linear(4, 3))
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    with pytest.warns(RuntimeWarning, match="batch statistics"):
        model.fit((x, y), batch_size=8, epochs=1, verbose=0,
                  callbacks=[VisualDL(str(tmp_path / "nograph"))])
    tags = LogReader(str(tmp_path)).tags("nograph")
    assert "graph" not in tags and sorted(tags["scalar"]) == ["train/loss", "train/lr"]


def test_an_elastic_resize_marker_is_on_disk_before_the_first_step(tmp_path):
    """Ray can end a resized group within the writer's flush interval: the marker of the
    resize (world size, step resumed at, restart count) is flushed when written, so a
    reader sees it while the group's writer is still open."""
    x, y = blobs(64)
    seen = []

    class ResumedByRay(Callback):  # what ray_train.ElasticCheckpoint sets on start
        def on_train_begin(self, logs=None):
            self.model.resumed = {"step": 22, "world_size": 1, "restart": 1}

    class ReadFromDisk(Callback):
        def on_train_batch_end(self, step, logs=None):
            if not seen:
                events = LogReader(str(tmp_path)).events("run", "workers", "workers")
                seen.append([(e.world_size, e.step, e.restart) for e in events])

    model = vf.Model(mlp())
    model.prepare(vf.optim.SGD(model.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    model.fit((x, y), batch_size=16, epochs=1, verbose=0, callbacks=[
        ResumedByRay(), VisualDL(str(tmp_path / "run")), ReadFromDisk()])
    assert seen == [[(1, 22, 1)]]
