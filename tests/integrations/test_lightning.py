"""VisualDLLogger under a real ``lightning.Trainer.fit`` (CPU, a few steps): the scalars it
logged are Lightning's own numbers (checked against the values the module computed and
against Lightning's CSVLogger in the same run), the hyper-parameters reach the config and
the hparams view, and the graph is the module's, as ONNX."""

from __future__ import annotations

import csv
import warnings
from argparse import Namespace

import numpy as np
import onnx
import pytest

from visualdl import LogReader

PACKAGES = ["lightning", "pytorch_lightning"]


def _package(name):
    """The Lightning package (``lightning.pytorch`` or ``pytorch_lightning``) and our logger
    for it; skipped cleanly where it is not installed."""
    if name == "lightning":
        pytest.importorskip("lightning", reason="lightning is not installed "
                            "(pip install visualdl[lightning])")
        import lightning.pytorch as pl

        from visualdl.integrations.lightning import VisualDLLogger
    else:
        pl = pytest.importorskip("pytorch_lightning", reason="pytorch_lightning is not "
                                 "installed (pip install pytorch-lightning)")
        from visualdl.integrations.pytorch_lightning import VisualDLLogger
    return pl, VisualDLLogger


def _module(pl, torch):
    class Tiny(pl.LightningModule):
        def __init__(self, lr=0.05, hidden=None, act=torch.nn.Tanh):
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), act(), torch.nn.Linear(8, 1))
            self.example_input_array = torch.zeros(2, 4)
            self.losses = []  # what training_step computed and logged, in order

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self(x), y)
            self.log("train/loss", loss, on_step=True, on_epoch=False)
            self.losses.append(float(loss.detach()))
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val/loss", torch.nn.functional.mse_loss(self(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    return Tiny(lr=0.05, hidden={"width": 8, "layers": [4, 8, 1]})


def _loader(torch, n=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x.sum(dim=1, keepdim=True)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)


def _fit(pl, torch, logger, tmp_path, epochs=2):
    torch.manual_seed(0)
    model = _module(pl, torch)
    csv_logger = pl.loggers.CSVLogger(str(tmp_path / "csv"), name="", version=0)
    trainer = pl.Trainer(max_epochs=epochs, logger=[logger, csv_logger], log_every_n_steps=1,
                         enable_progress_bar=False, enable_checkpointing=False,
                         enable_model_summary=False, accelerator="cpu", devices=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's notes on workers and small datasets
        trainer.fit(model, _loader(torch), _loader(torch, 8, seed=1))
    return model, trainer, csv_logger


def _csv_series(csv_logger, name):
    with open(csv_logger.experiment.metrics_file_path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get(name)]
    return [int(r["step"]) for r in rows], [float(r[name]) for r in rows]


@pytest.mark.parametrize("package", PACKAGES)
def test_fit_logs_metrics_hparams_and_graph(torch, tmp_path, package):
    pl, VisualDLLogger = _package(package)
    logger = VisualDLLogger(str(tmp_path / "logs"), name="tiny", log_graph=True,
                            system_metrics=False)
    model, trainer, csv_logger = _fit(pl, torch, logger, tmp_path)
    assert logger.log_dir == str(tmp_path / "logs" / "tiny" / "version_0")

    reader = LogReader(str(tmp_path / "logs"))
    run = "tiny/version_0"
    assert reader.runs() == [run]
    loss = reader.scalars(run, "train/loss")
    assert len(model.losses) == 16  # 2 epochs of 8 batches
    # float32 losses, kept exactly as the module computed them, at Lightning's steps
    assert loss.values.tolist() == model.losses
    assert (loss.steps.tolist(), loss.values.tolist()) == _csv_series(csv_logger, "train/loss")
    val = reader.scalars(run, "val/loss")
    assert (val.steps.tolist(), val.values.tolist()) == _csv_series(csv_logger, "val/loss")
    assert len(val.values) == 2
    epoch = reader.scalars(run, "epoch")
    assert set(epoch.values.tolist()) == {0.0, 1.0}

    config = reader.config(run).nested
    assert config["lr"] == 0.05
    assert config["hidden"] == {"width": 8, "layers": [4, 8, 1]}
    assert config["act"] == str(torch.nn.Tanh)  # a class is kept as its text, not refused
    hparams = reader.hparams(run)
    assert hparams.hparams["lr"] == 0.05 and hparams.hparams["hidden.width"] == 8
    assert hparams.hparams["hidden.layers"] == "[4, 8, 1]"
    assert {"train/loss", "val/loss", "epoch"} <= set(hparams.metric_tags)

    (ref,) = reader.graphs(run, "model")
    graph = onnx.load_from_string(reader.load(ref).onnx)
    assert [n.op_type for n in graph.graph.node] == ["Gemm", "Tanh", "Gemm"]
    assert [d.dim_value for d in graph.graph.input[0].type.tensor_type.shape.dim] == [2, 4]


def test_versions_images_and_the_experiment(torch, tmp_path):
    pl, VisualDLLogger = _package("lightning")
    first = VisualDLLogger(str(tmp_path), name="exp", system_metrics=False)
    first.log_metrics({"a": 1.0}, step=0)
    first.finalize("success")
    second = VisualDLLogger(str(tmp_path), name="exp", system_metrics=False)
    assert (first.version, second.version) == (0, 1)
    assert second.log_dir == str(tmp_path / "exp" / "version_1")
    chw = torch.zeros(3, 4, 5)
    chw[0] = 1.0  # red
    second.log_image("samples", [chw, chw * 0.5], step=3)
    second.experiment.add_histogram("w", np.arange(10.0), 3)
    named = VisualDLLogger(str(tmp_path), name="", version="mine", system_metrics=False)
    named.log_hyperparams(Namespace(depth=3, opt=None))
    second.finalize("success")
    named.finalize("success")

    reader = LogReader(str(tmp_path))
    assert reader.runs() == ["exp/version_0", "exp/version_1", "mine"]
    assert reader.tags("exp/version_1")["image"] == ["samples/0", "samples/1"]
    (ref,) = reader.images("exp/version_1", "samples/0")
    image = reader.load(ref)
    assert (image.width, image.height) == (5, 4)
    assert len(reader.histograms("exp/version_1", "w")) == 1
    assert reader.config("mine").nested == {"depth": 3, "opt": None}
    assert reader.hparams("mine").hparams == {"depth": 3, "opt": "None"}


def test_a_metric_that_is_no_number_is_refused_and_nothing_is_lost(torch, tmp_path):
    pl, VisualDLLogger = _package("lightning")
    logger = VisualDLLogger(str(tmp_path), name="bad", system_metrics=False)
    logger.log_metrics({"loss": torch.tensor(0.5)}, step=0)
    with pytest.raises(TypeError, match="metric 'acc' must be a number"):
        logger.log_metrics({"loss": 0.25, "acc": "high"}, step=1)
    with pytest.raises(TypeError, match="metric 'vec' must be a number"):
        logger.log_metrics({"vec": torch.ones(3)}, step=1)
    logger.log_metrics({"loss": 0.125}, step=2)
    logger.finalize("failed")
    reader = LogReader(str(tmp_path))
    loss = reader.scalars("bad/version_0", "loss")
    # the refused call wrote nothing (not even its good value); the others are all kept
    assert (loss.steps.tolist(), loss.values.tolist()) == ([0, 2], [0.5, 0.125])


def test_log_graph_without_an_example_warns_and_logs_nothing(torch, tmp_path):
    pl, VisualDLLogger = _package("lightning")
    logger = VisualDLLogger(str(tmp_path), name="g", log_graph=True, system_metrics=False)
    with pytest.warns(UserWarning, match="example_input_array"):
        logger.log_graph(torch.nn.Linear(2, 2))
    logger.log_graph(torch.nn.Linear(2, 3), torch.zeros(1, 2))
    logger.finalize("success")
    reader = LogReader(str(tmp_path))
    (ref,) = reader.graphs("g/version_0", "model")
    graph = onnx.load_from_string(reader.load(ref).onnx)
    assert [d.dim_value for d in graph.graph.output[0].type.tensor_type.shape.dim] == [1, 3]
