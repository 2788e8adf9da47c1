"""vf.Model: fit/evaluate/predict/save/load, losses, metrics and the standard callbacks."""

import io
import os

import numpy as np
import pytest
from .toy_data import blobs, mlp

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework.callbacks import (
    Callback,
    EarlyStopping,
    LRScheduler,
    ModelCheckpoint,
    ProgBarLogger,
)


class Recorder(Callback):
    def __init__(self):
        self.calls = []

    def _rec(name):
        def hook(self, *args, logs=None):
            self.calls.append((name,) + tuple(a for a in args if not isinstance(a, dict)))
        return hook

    for _name in ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
                  "on_train_batch_begin", "on_train_batch_end", "on_eval_begin", "on_eval_end",
                  "on_eval_batch_begin", "on_eval_batch_end", "on_predict_begin",
                  "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end"):
        locals()[_name] = _rec(_name)
    del _name


def _model(lr=0.05, metrics=None):
    net = mlp()
    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), lr), vf.nn.CrossEntropyLoss(),
                  metrics if metrics is not None else vf.metric.Accuracy())
    return model


def test_callbacks_fire_in_order():
    x, y = blobs(10)
    rec = Recorder()
    model = _model()
    model.fit((x, y), (x[:3], y[:3]), batch_size=4, epochs=2, eval_freq=2, verbose=0,
              callbacks=[rec])
    train_batches = [c for i in range(3) for c in (("on_train_batch_begin", i),
                                                   ("on_train_batch_end", i))]
    assert rec.calls == (
        [("on_train_begin",), ("on_epoch_begin", 0)] + train_batches + [("on_epoch_end", 0),
         ("on_epoch_begin", 1)] + train_batches + [("on_epoch_end", 1), ("on_eval_begin",),
         ("on_eval_batch_begin", 0), ("on_eval_batch_end", 0), ("on_eval_end",),
         ("on_train_end",)])
    rec.calls.clear()
    model.predict((x,), batch_size=8, verbose=0, callbacks=[rec])
    assert rec.calls == [("on_predict_begin",), ("on_predict_batch_begin", 0),
                         ("on_predict_batch_end", 0), ("on_predict_batch_begin", 1),
                         ("on_predict_batch_end", 1), ("on_predict_end",)]


def test_fit_learns_and_evaluate_predict_agree():
    x, y = blobs(96)
    model = _model()
    history = []

    class Keep(Callback):
        def on_train_batch_end(self, step, logs=None):
            history.append(dict(logs))

    result = model.fit(vf.data.TensorDataset(x, y), vf.data.TensorDataset(x, y), batch_size=16,
                       epochs=6, verbose=0, callbacks=[Keep()])
    assert len(history) == 6 * 6 and set(history[0]) == {"loss", "acc", "batch_size"}
    assert history[-1]["loss"] < history[0]["loss"]
    assert result["acc"] > 0.95
    ev = model.evaluate((x, y), batch_size=32, verbose=0)
    assert ev == pytest.approx(result)
    logits = model.predict((x,), batch_size=40, stack_outputs=True, verbose=0)[0]
    assert logits.shape == (96, 3)
    assert ev["acc"] == pytest.approx(float((logits.argmax(1) == y).mean()))
    expected_loss = F.cross_entropy(vf.tensor(logits), vf.tensor(y)).item()
    assert ev["loss"] == pytest.approx(expected_loss, rel=1e-5)
    per_batch = model.predict((x,), batch_size=40, verbose=0)[0]
    assert [p.shape[0] for p in per_batch] == [40, 40, 16]


def test_fit_resumed_after_its_last_epoch_evaluates_without_training():
    # an elastic group restarted from the checkpoint its predecessor took after the last
    # epoch: no step is trained, and fit still answers with the model's evaluation
    x, y = blobs(96)
    model = _model()
    model.fit((x, y), batch_size=16, epochs=6, verbose=0)
    before = [p.numpy().copy() for p in model.network.parameters()]
    rec = Recorder()

    class ResumedAtTheEnd(Callback):
        def on_train_begin(self, logs=None):
            self.model.start_epoch = 6

    result = model.fit((x, y), (x, y), batch_size=16, epochs=6, verbose=0,
                       callbacks=[ResumedAtTheEnd(), rec])
    assert result == pytest.approx(model.evaluate((x, y), batch_size=32, verbose=0))
    assert result["acc"] > 0.95
    assert all(np.array_equal(a, p.numpy()) for a, p in zip(before, model.network.parameters()))
    assert [c[0] for c in rec.calls if "batch" not in c[0]] == [
        "on_train_begin", "on_eval_begin", "on_eval_end", "on_train_end"]


def test_accuracy_topk_and_names():
    scores = np.array([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5], [0.3, 0.3, 0.4]])
    labels = np.array([2, 0, 1, 0])
    acc = vf.metric.Accuracy(topk=(1, 2))
    assert acc.name() == ["acc_top1", "acc_top2"]
    assert acc.update(*acc.compute(vf.tensor(scores), vf.tensor(labels))) == [0.25, 1.0]
    acc.update(*acc.compute(scores[:2], labels[:2, None]))
    assert acc.accumulate() == pytest.approx([2 / 6, 1.0])
    acc.reset()
    assert acc.accumulate() == [0.0, 0.0]
    assert vf.metric.Accuracy().name() == ["acc"]
    with pytest.raises(ValueError):
        vf.metric.Accuracy(topk=0)


def test_loss_layers_match_functional():
    logits = vf.randn((4, 3))
    labels = vf.tensor([0, 2, 1, 1])
    assert vf.nn.CrossEntropyLoss()(logits, labels).item() == pytest.approx(
        F.cross_entropy(logits, labels).item())
    assert vf.nn.CrossEntropyLoss(reduction="sum")(logits, labels).item() == pytest.approx(
        F.cross_entropy(logits, labels, reduction="sum").item())
    a, b = vf.randn((3, 2)), vf.randn((3, 2))
    assert vf.nn.MSELoss()(a, b).item() == pytest.approx(
        float(((a.numpy() - b.numpy()) ** 2).mean()), rel=1e-6)


def test_mse_regression_fit():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    vf.seed(0)
    net = vf.nn.Linear(3, 1)
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.MSELoss())
    out = model.fit((x, y), (x, y), batch_size=16, epochs=20, verbose=0)
    assert model.metrics_names() == ["loss"] and out["loss"] < 1e-3


def test_save_load_roundtrip_and_onnx_export(tmp_path):
    x, y = blobs(48)
    model = _model()
    model.fit((x, y), batch_size=16, epochs=2, verbose=0)
    path = str(tmp_path / "ckpt" / "m")
    model.save(path)
    assert os.path.exists(path + ".vfparams") and os.path.exists(path + ".vfopt")
    other = _model(lr=0.05)
    other.load(path)
    np.testing.assert_array_equal(other.predict((x,), 48, stack_outputs=True, verbose=0)[0],
                                  model.predict((x,), 48, stack_outputs=True, verbose=0)[0])
    assert other.optimizer.step_count == model.optimizer.step_count == 6
    # skip_mismatch ignores entries of another shape
    wide = vf.Model(vf.nn.Sequential(vf.nn.Linear(6, 16), vf.nn.ReLU(), vf.nn.Linear(16, 4)))
    wide.load(path, skip_mismatch=True, reset_optimizer=True)
    np.testing.assert_array_equal(wide.network[0].weight.numpy(), model.network[0].weight.numpy())
    with pytest.raises(ValueError, match="2.weight"):
        wide.load(path)
    spec = vf.Model(model.network, inputs=[vf.jit.InputSpec([None, 6], "float32", "x")])
    spec.save(str(tmp_path / "infer"), training=False)
    loaded = vf.jit.load(str(tmp_path / "infer.onnx"))
    np.testing.assert_allclose(loaded.run(x)[0], model.predict((x,), 48, stack_outputs=True,
                                                              verbose=0)[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="InputSpec"):
        model.save(str(tmp_path / "nospec"), training=False)


def test_model_checkpoint_and_early_stopping(tmp_path):
    x, y = blobs(32)
    model = _model(lr=0.0)  # nothing improves: early stopping must trigger
    epochs = []

    class Epochs(Callback):
        def on_epoch_end(self, epoch, logs=None):
            epochs.append(epoch)

    stopper = EarlyStopping(monitor="loss", patience=1, verbose=0)
    model.fit((x, y), (x, y), batch_size=16, epochs=10, verbose=0, save_dir=str(tmp_path),
              callbacks=[stopper, Epochs(), ModelCheckpoint(save_freq=2)])
    assert epochs == [0, 1, 2] and stopper.stopped_epoch == 2
    files = sorted(os.listdir(tmp_path))
    assert files == ["1.vfopt", "1.vfparams", "best_model.vfopt", "best_model.vfparams",
                     "final.vfopt", "final.vfparams"]
    acc_stopper = EarlyStopping(monitor="acc", patience=0, verbose=0, save_best_model=False)
    assert acc_stopper.maximize


def test_lr_scheduler_callback_steps_by_step_and_by_epoch():
    x, y = blobs(32)
    net = mlp()
    sched = vf.optim.StepLR(0.1, step_size=2, gamma=0.5)
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), sched), vf.nn.CrossEntropyLoss())
    lrs = []

    class Rates(Callback):
        def on_train_batch_begin(self, step, logs=None):
            lrs.append(self.model.optimizer.get_lr())

    model.fit((x, y), batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=[Rates()])
    assert lrs == pytest.approx([0.1, 0.1, 0.05, 0.05]) and sched.last_epoch == 4
    sched2 = vf.optim.StepLR(0.1, step_size=1, gamma=0.5)
    model.prepare(vf.optim.SGD(net.parameters(), sched2), vf.nn.CrossEntropyLoss())
    model.fit((x, y), batch_size=16, epochs=3, verbose=0,
              callbacks=[LRScheduler(by_step=False, by_epoch=True)])
    assert sched2.last_epoch == 3


def test_progress_bar_shows_steps_loss_and_metrics():
    x, y = blobs(32)
    model = _model()
    out = io.StringIO()
    model.fit((x, y), (x, y), batch_size=8, epochs=1, log_freq=1,
              callbacks=[ProgBarLogger(log_freq=1, verbose=1, file=out)])
    text = out.getvalue()
    assert "Epoch 1/1" in text and "4/4" in text and "loss" in text and "acc" in text
    assert "eval loss" in text
    lines = io.StringIO()
    model.fit((x, y), batch_size=8, epochs=2, callbacks=[ProgBarLogger(verbose=2, file=lines)])
    logged = lines.getvalue().splitlines()
    assert [line.split()[:2] for line in logged] == [["Epoch", "1/2"], ["Epoch", "2/2"]]
    assert all("loss" in line and "acc" in line for line in logged)


def test_prepare_and_fit_errors():
    model = vf.Model(mlp())
    with pytest.raises(RuntimeError, match="prepare"):
        model.fit(blobs(8), batch_size=4, verbose=0)
    with pytest.raises(TypeError):
        model.prepare(loss="nope")
    with pytest.raises(TypeError):
        vf.Model(object())
