"""Runs that logged only hyper-parameters have a config too: TensorBoard's hparams plugin
and VisualDL 2.x's hparams read into the same place as ``add_config``."""

from __future__ import annotations

from tests.helpers.http import client_of
from tests.sources.tfevents.tbwrite import add_hparams
from tests.sources.vdl2.common import TRAIN, copy_logs


def test_tensorboard_hparams_are_the_config(tmp_path):
    add_hparams(str(tmp_path), {"lr": 0.5, "opt": "sgd", "bn": True}, {"acc": 0.9}, "t1", 100.0)
    add_hparams(str(tmp_path), {"lr": 0.25, "opt": "sgd", "bn": False}, {"acc": 0.7}, "t2", 101.0)
    with client_of(tmp_path) as client:
        body = client.json("/api/config", run="t1")
        assert body["flat"] == {"bn": True, "lr": 0.5, "opt": "sgd"}
        diff = client.json("/api/compare", params={"run": ["t1", "t2"]})
        assert diff["config"]["keys"] == ["bn", "lr"]
        assert diff["config"]["values"] == {"bn": [True, False], "lr": [0.5, 0.25]}
        assert diff["summaries"]["acc"][0]["best"] == 0.8999999761581421  # float32 in TF


def test_visualdl2_hparams_are_the_config(tmp_path):
    logdir = copy_logs(tmp_path / "logs")
    with client_of(logdir) as client:
        body = client.json("/api/config", run="train")
        assert body["flat"] == TRAIN["hparams"]["hparams"] == {"lr": 0.01, "layers": 3,
                                                               "opt": "adam"}
        assert body["config"] == {}


def test_a_config_added_later_is_served(tmp_path):
    from tests.helpers.http import wait_for
    from visualdl import LogWriter

    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config({"model": {"depth": 2}})
    with client_of(tmp_path) as client:
        assert client.json("/api/config", run="run")["flat"] == {"model.depth": 2}
        with LogWriter(logdir=str(tmp_path / "run")) as w:  # a second file of the run
            w.add_config({"model": {"width": 8}})
            w.add_hparams({"lr": 0.5}, [])
        wait_for(lambda: client.json("/api/config", run="run")["flat"] == {
            "lr": 0.5, "model.depth": 2, "model.width": 8}, timeout=20)
        assert client.json("/api/runs/config")["same"] == {"lr": 0.5, "model.depth": 2,
                                                            "model.width": 8}
