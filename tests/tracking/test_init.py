"""visualdl.init / finish: where runs go, their names, the config, a second init while a
run is open (wandb's default: the open run is returned), and runs finished at exit."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import visualdl
from tests.tracking.common import points, read

REPO = Path(__file__).resolve().parents[2]


def test_import_visualdl_stays_lazy():
    script = ("import sys, visualdl\n"
              "assert 'visualdl.tracking' not in sys.modules\n"
              "assert 'visualdl.writer.log_writer' not in sys.modules\n"
              "assert 'init' in dir(visualdl) and visualdl.run is None\n"
              "assert 'visualdl.tracking' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr


def test_generated_names_count_the_projects_runs(tmp_path):
    first = visualdl.init(dir=tmp_path / "logs")
    visualdl.finish()
    second = visualdl.init(dir=tmp_path / "logs")
    visualdl.finish()
    assert first.project == "uncategorized"
    assert re.fullmatch(r"[a-z]+-[a-z]+-1", first.name), first.name
    assert re.fullmatch(r"[a-z]+-[a-z]+-2", second.name), second.name
    assert second.dir == os.path.join(str(tmp_path / "logs"), "uncategorized", second.name)
    assert sorted(os.listdir(tmp_path / "logs" / "uncategorized")) == \
        sorted([first.name, second.name])


def test_generated_names_leave_the_scripts_random_alone():
    import random

    random.seed(7)
    expected = [random.random() for _ in range(3)]
    random.seed(7)
    visualdl.init(project="p")
    assert [random.random() for _ in range(3)] == expected


def test_a_name_in_use_gets_a_suffix_unless_resumed():
    for value in (1, 2):
        visualdl.init(project="p", name="exp")
        visualdl.log({"a": value})
        visualdl.finish()
    visualdl.init(project="p", name="exp", resume="allow")
    visualdl.log({"a": 3}, step=5)
    visualdl.finish()
    got = read()
    assert got.runs() == ["exp", "exp-2"]
    assert points(got, "exp", "a") == [(0, 1), (5, 3)]
    assert points(got, "exp-2", "a") == [(0, 2)]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"name": "a/b"}, ValueError, "init: name 'a/b' must be a non-empty name"),
    ({"name": ".."}, ValueError, "init: name '..' must be"),
    ({"project": " "}, ValueError, "init: project ' ' must be"),
    ({"project": 3}, TypeError, "init: project must be a str, got int"),
    ({"config": [1, 2]}, TypeError, "config must be a dict, an argparse.Namespace or a "
                                    "dataclass, got list"),
    ({"config": {"f": object()}}, TypeError, "f"),
    ({"reinit": "sometimes"}, ValueError, "init: reinit must be"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        visualdl.init(**{"project": "p", **kwargs})
    assert visualdl.run is None
    assert not os.path.exists("vdl_runs/p") or os.listdir("vdl_runs/p") == []


def test_config_from_a_dataclass_or_namespace_and_set_later():
    @dataclasses.dataclass
    class Opt:
        lr: float = 0.1
        sizes: tuple = (1, 2)

    assert visualdl.login(key="unused") is True
    visualdl.init(project="p", name="dc", config=Opt(), entity="me", tags=["x"],
                  mode="offline", settings=visualdl.Settings(start_method="thread"))
    visualdl.config.batch = 32
    visualdl.config["model"] = {"depth": 4}
    visualdl.config.update({"lr": 0.2})
    with pytest.raises(TypeError, match="bad"):
        visualdl.config.update({"bad": object(), "kept_out": 1})
    assert "kept_out" not in visualdl.config and visualdl.config.lr == 0.2
    assert dict(visualdl.config.items()) == {"lr": 0.2, "sizes": (1, 2), "batch": 32,
                                             "model": {"depth": 4}}
    with pytest.raises(AttributeError, match="the config has no key 'missing'"):
        visualdl.config.missing
    visualdl.finish()
    visualdl.init(project="p", name="ns", config=argparse.Namespace(epochs=3))
    visualdl.finish()
    got = read()
    assert got.config("dc").nested == {"lr": 0.2, "sizes": [1, 2], "batch": 32,
                                       "model": {"depth": 4}}
    assert got.config("ns").nested == {"epochs": 3}


def test_init_twice_returns_the_open_run():
    first = visualdl.init(project="p", name="one")
    visualdl.log({"a": 1})
    with pytest.warns(UserWarning, match="the run 'one' is still open and is returned"):
        again = visualdl.init(project="p", name="two")
    assert again is first and visualdl.run is first
    visualdl.log({"a": 2})
    visualdl.finish()
    got = read()
    assert got.runs() == ["one"] and points(got, "one", "a") == [(0, 1), (1, 2)]


def test_reinit_finishes_the_open_run():
    first = visualdl.init(project="p", name="one")
    visualdl.log({"a": 1})
    second = visualdl.init(project="p", name="two", reinit=True)
    assert first.finished and visualdl.run is second
    visualdl.log({"a": 2})
    third = visualdl.init(project="p", name="three", reinit="create_new")
    assert visualdl.run is second  # create_new: beside it, not the current one
    third.log({"a": 3})
    third.finish()
    visualdl.finish()
    got = read()
    assert [points(got, run, "a") for run in ("one", "two", "three")] == [
        [(0, 1)], [(0, 2)], [(0, 3)]]


def test_an_open_run_is_finished_at_exit(tmp_path):
    script = ("import visualdl as wandb\n"
              "run = wandb.init(project='p', name='r', config={'lr': 0.5})\n"
              "for i in range(3): wandb.log({'loss': i / 2})\n"
              "side = wandb.init(project='p', name='side', reinit='create_new')\n"
              "side.log({'x': 1.0})\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr
    got = read(root=str(tmp_path / "vdl_runs"))
    assert points(got, "r", "loss") == [(0, 0), (1, 0.5), (2, 1)]
    assert got.config("r").nested == {"lr": 0.5, "summary": {"loss": 1.0}}
    assert points(got, "side", "x") == [(0, 1)]


def test_config_update_merges_nested_dicts_as_recorded():
    visualdl.init(project="p", name="r", config={"model": {"depth": 12, "width": 64}})
    visualdl.config.update({"model": {"depth": 24}})
    assert visualdl.config.model == {"depth": 24, "width": 64}
    visualdl.finish()
    assert read().config("r").nested == {"model": {"depth": 24, "width": 64}}


def test_a_bad_reinit_leaves_the_open_run_open():
    first = visualdl.init(project="p", name="one")
    visualdl.log({"a": 1})
    with pytest.raises(ValueError, match="init: name 'x/y' must be"):
        visualdl.init(project="p", name="x/y", reinit=True)
    with pytest.raises(TypeError, match="bad"):
        visualdl.init(project="p", name="two", reinit=True, config={"bad": object()})
    assert visualdl.run is first and not first.finished
    visualdl.log({"a": 2})
    visualdl.finish()
    assert read().runs() == ["one"] and points(read(), "one", "a") == [(0, 1), (1, 2)]
