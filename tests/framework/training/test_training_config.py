"""The VisualDL callback records the run's config: what fit was given, merged with the
``config=`` passed to the callback; a bad config fails when the callback is made."""

import pytest
from .toy_data import blobs, mlp

import visualdl.framework as vf
from visualdl import LogReader
from visualdl.framework.callbacks import VisualDL


def test_fit_records_its_config_merged_with_the_given_one(tmp_path):
    x, y = blobs(32)
    net = mlp()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.1), vf.nn.CrossEntropyLoss())
    cb = VisualDL(str(tmp_path / "run"), config={"data": {"name": "blobs"},
                                                 "optimizer": {"lr": 0.1, "momentum": 0}})
    model.fit((x, y), batch_size=16, epochs=2, verbose=0, callbacks=[cb])
    got = LogReader(str(tmp_path)).config("run")
    params = sum(p.numel() for p in net.parameters())
    assert got.nested == {"fit": {"batch_size": 16, "epochs": 2},
                          "optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0},
                          "model": {"name": type(net).__name__, "params": params},
                          "data": {"name": "blobs"}}
    assert got.flat["optimizer.name"] == "SGD" and got.flat["model.params"] == params


def test_bad_config_fails_at_the_callback(tmp_path):
    with pytest.raises(TypeError, match=r"config\['data.loader'\] is a object"):
        VisualDL(str(tmp_path / "run"), config={"data": {"loader": object()}})
