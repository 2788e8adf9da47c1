"""VisualDLCallback under a real Keras 3 ``model.fit`` on the torch backend (no
TensorFlow): epoch and batch metrics are the values Keras handed its callbacks, in the
``train``/``validation`` runs and under the tags of Keras' TensorBoard callback, with the
learning rate, the weights' histograms and the model's config."""

from __future__ import annotations

import os

import numpy as np
import pytest

from visualdl import LogReader

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is first imported


def _keras():
    keras = pytest.importorskip("keras", reason="keras is not installed "
                                "(pip install visualdl[keras])")
    if keras.backend.backend() != "torch":
        pytest.skip(f"keras was imported with the {keras.backend.backend()!r} backend; "
                    f"these tests run it on torch (KERAS_BACKEND=torch)")
    return keras


def _recorder(keras):
    class Recorder(keras.callbacks.Callback):
        """What Keras hands its callbacks, as floats."""

        def __init__(self):
            super().__init__()
            self.batches, self.epochs = [], []

        def on_train_batch_end(self, batch, logs=None):
            self.batches.append({k: float(v) for k, v in logs.items()})

        def on_epoch_end(self, epoch, logs=None):
            self.epochs.append({k: float(v) for k, v in logs.items()})

    return Recorder()


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    return x, x.sum(axis=1, keepdims=True)


def _fit(keras, callback, model=None, epochs=2):
    keras.utils.set_random_seed(0)
    if model is None:
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                                  keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mse",
                  metrics=["mae"])
    recorder = _recorder(keras)
    model.fit(*_data(32, 0), batch_size=4, epochs=epochs, validation_data=_data(8, 1),
              callbacks=[callback, recorder], verbose=0)
    return model, recorder


def test_fit_logs_epoch_and_batch_metrics_rate_histograms_and_config(torch, tmp_path):
    keras = _keras()
    from visualdl.integrations.keras import VisualDLCallback

    callback = VisualDLCallback(str(tmp_path), update_freq=3, histogram_freq=1,
                                system_metrics=False)
    model, recorder = _fit(keras, callback)
    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["train", "validation"]

    def series(run, tag):
        s = reader.scalars(run, tag)
        return s.steps.tolist(), s.values.tolist()

    for name in ("loss", "mae"):
        assert series("train", f"epoch_{name}") == ([0, 1], [e[name] for e in recorder.epochs])
        assert series("validation", f"epoch_{name}") == \
            ([0, 1], [e[f"val_{name}"] for e in recorder.epochs])
        # 16 batches: every 3rd, counted over both epochs
        assert series("train", f"batch_{name}") == \
            ([3, 6, 9, 12, 15], [recorder.batches[s - 1][name] for s in (3, 6, 9, 12, 15)])
    assert series("train", "epoch_learning_rate") == ([0, 1], [float(np.float32(0.05))] * 2)
    assert series("train", "batch_learning_rate")[0] == [3, 6, 9, 12, 15]

    kernel = model.layers[0].kernel.path.replace(":", "_") + "/histogram"
    assert kernel in reader.tags("train")["histogram"]
    first, last = reader.histograms("train", kernel)
    assert (first.step, last.step) == (0, 1)
    assert last.count == 32  # 4 x 8 weights
    assert np.isclose(last.max, keras.ops.convert_to_numpy(model.layers[0].kernel).max())

    config = reader.config("train").nested
    dense = [layer["config"] for layer in config["model"]["layers"]
             if layer["class_name"] == "Dense"]
    assert [d["units"] for d in dense] == [8, 1] and dense[0]["activation"] == "tanh"
    assert config["optimizer"]["name"] == "sgd"
    assert np.isclose(config["optimizer"]["learning_rate"], 0.05)


def test_epoch_only_by_default_and_a_model_built_by_fit(torch, tmp_path):
    keras = _keras()
    from visualdl.integrations.keras import VisualDLCallback

    # no Input: the model is built by fit, after the callback's on_train_begin
    unbuilt = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(1)])
    callback = VisualDLCallback(str(tmp_path), histogram_freq=2, system_metrics=False)
    _, recorder = _fit(keras, callback, model=unbuilt, epochs=3)
    reader = LogReader(str(tmp_path))
    tags = reader.tags("train")
    assert not [t for t in tags["scalar"] if t.startswith("batch_")]
    assert reader.scalars("train", "epoch_loss").values.tolist() == \
        [e["loss"] for e in recorder.epochs]
    kernel = unbuilt.layers[0].kernel.path.replace(":", "_") + "/histogram"
    assert [h.step for h in reader.histograms("train", kernel)] == [0, 2]
    layers = reader.config("train").nested["model"]["layers"]
    assert [la["config"]["units"] for la in layers if la["class_name"] == "Dense"] == [3, 1]


@pytest.mark.parametrize("option, value, message", [
    ("update_freq", "step", "update_freq must be 'epoch', 'batch' or a positive integer"),
    ("update_freq", 0, "update_freq must be"),
    ("histogram_freq", -1, "histogram_freq must be a non-negative integer"),
])
def test_bad_options_are_refused_by_name(torch, tmp_path, option, value, message):
    _keras()
    from visualdl.integrations.keras import VisualDLCallback

    with pytest.raises(ValueError, match=message):
        VisualDLCallback(str(tmp_path), **{option: value})
    assert not os.listdir(tmp_path)  # nothing was opened
