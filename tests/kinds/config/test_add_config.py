"""add_config: what it accepts, how it is kept (nested, flattened, merged), and what it
refuses at the call, naming the dotted key, without losing what was logged before."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import pytest

from visualdl import LogWriter
from visualdl.compat.summary_writer import SummaryWriter
from visualdl.kinds.config.flatten import flatten
from visualdl.reader import LogReader


def _config(logdir, run="run"):
    return LogReader(str(logdir)).config(run)


def test_nested_dataclass_and_lists(tmp_path):
    @dataclasses.dataclass
    class Inner:
        lr: float = 0.1
        betas: tuple = (0.9, 0.999)

    @dataclasses.dataclass
    class Outer:
        name: str = "x"
        inner: Inner = dataclasses.field(default_factory=Inner)

    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config(Outer())
    got = _config(tmp_path)
    assert got.nested == {"name": "x", "inner": {"lr": 0.1, "betas": [0.9, 0.999]}}
    assert got.flat == {"inner.betas.0": 0.9, "inner.betas.1": 0.999, "inner.lr": 0.1,
                        "name": "x"}


def test_later_call_merges_key_by_key(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config({"model": {"depth": 12, "width": 64}, "seed": 0})
        w.add_config({"model": {"depth": 24}, "extra": [1, {"k": None}]})
    got = _config(tmp_path)
    assert got.nested == {"model": {"depth": 24, "width": 64}, "seed": 0,
                          "extra": [1, {"k": None}]}
    assert got.flat == {"extra.0": 1, "extra.1.k": None, "model.depth": 24,
                        "model.width": 64, "seed": 0}


def test_json_and_yaml_files_and_namespace(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"a": {"b": [1, 2]}}), encoding="utf-8")
    (tmp_path / "c.yml").write_text("opt:\n  name: adam\n  eps: 1.0e-8\n", encoding="utf-8")
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config(tmp_path / "c.json")
        w.add_config(str(tmp_path / "c.yml"))
        w.add_config(argparse.Namespace(epochs=3))
    assert _config(tmp_path).flat == {"a.b.0": 1, "a.b.1": 2, "epochs": 3,
                                      "opt.eps": 1e-8, "opt.name": "adam"}


def test_omegaconf_resolved(tmp_path):
    omegaconf = pytest.importorskip("omegaconf")
    cfg = omegaconf.OmegaConf.create({"model": {"depth": 6, "width": "${model.depth}"},
                                      "tags": ["a", "b"]})
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config(cfg)
    assert _config(tmp_path).flat == {"model.depth": 6, "model.width": 6, "tags.0": "a",
                                      "tags.1": "b"}


def test_omegaconf_that_does_not_resolve(tmp_path):
    omegaconf = pytest.importorskip("omegaconf")
    cfg = omegaconf.OmegaConf.create({"a": "${nowhere}"})
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        with pytest.raises(ValueError, match="does not resolve"):
            w.add_config(cfg)


def test_summary_writer_records_in_its_run(tmp_path):
    with SummaryWriter(str(tmp_path / "run")) as w:
        w.add_config({"lr": 0.5})
        w.add_scalar("loss", 1.0, 0)
    assert _config(tmp_path).flat == {"lr": 0.5}


def _cycle():
    d = {"a": {"b": 1}}
    d["a"]["self"] = d
    return d


class Thing:
    pass


@pytest.mark.parametrize("config, error, words", [
    ({"model": {"act": Thing()}}, TypeError, "config['model.act'] is a Thing"),
    ({"layers": [1, lambda x: x]}, TypeError, "config['layers.1'] is a function"),
    (_cycle(), ValueError, "config['a.self'] refers back"),
    ({"opt": {"lr": math.nan}}, ValueError, "config['opt.lr'] is nan"),
    ({"opt": {"lr": math.inf}}, ValueError, "config['opt.lr'] is inf"),
    ({"opt": {math.nan: 1}}, TypeError, "config['opt'] has the key nan"),
    ({"opt": {3: 1}}, TypeError, "config['opt'] has the key 3"),
    ({"s": {1, 2}}, TypeError, "config['s'] is a set"),
    ([1, 2], TypeError, "mapping at its top level"),
    (42, TypeError, "mapping at its top level"),
    ("missing.yaml", ValueError, "could not be read"),
    ("config.txt", ValueError, "expected a .json, .yaml or .yml"),
])
def test_bad_config_raises_at_the_call(tmp_path, config, error, words):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 2.0, 0)
        with pytest.raises(error) as info:
            w.add_config(config)
        assert words in str(info.value)
        w.add_scalar("loss", 1.0, 1)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "loss").values.tolist() == [2.0, 1.0]  # nothing lost
    assert reader.config("run").flat == {}


def test_bad_files(tmp_path):
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "bad.yaml").write_text("a: [1,\n", encoding="utf-8")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        with pytest.raises(ValueError, match="bad.json.* is not valid JSON"):
            w.add_config(tmp_path / "bad.json")
        with pytest.raises(ValueError, match="bad.yaml.* is not valid YAML"):
            w.add_config(tmp_path / "bad.yaml")
        with pytest.raises(TypeError, match="mapping at its top level"):
            w.add_config(tmp_path / "list.yaml")


def test_caller_changes_after_the_call_are_not_recorded(tmp_path):
    config = {"a": [1, 2]}
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config(config)
        config["a"].append(3)
    assert _config(tmp_path).flat == {"a.0": 1, "a.1": 2}


def test_flatten_empty_containers_are_leaves():
    assert flatten({"a": {}, "b": [], "c": {"d": []}}) == {"a": {}, "b": [], "c.d": []}
