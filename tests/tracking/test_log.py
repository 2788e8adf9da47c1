"""visualdl.log: wandb's steps, what each kind of value becomes, and bad input refused
with the key named while what was logged before stays."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest

import visualdl
from tests.tracking.common import points, read


def test_log_before_init_says_to_call_init():
    assert visualdl.run is None
    with pytest.raises(RuntimeError, match=r"visualdl.log: no run is open; call "
                                           r"visualdl.init\(\) first"):
        visualdl.log({"loss": 1.0})
    with pytest.raises(RuntimeError, match="visualdl.config: no run is open"):
        visualdl.config.lr
    with pytest.raises(RuntimeError, match="visualdl.summary: no run is open"):
        visualdl.summary["x"] = 1


def test_steps_advance_as_wandbs():
    visualdl.init(project="p", name="r")
    visualdl.log({"a": 1})                    # step 0, then 1
    visualdl.log({"a": 2})                    # step 1, then 2
    visualdl.log({"b": 3}, commit=False)      # step 2 stays open
    visualdl.log({"a": 4})                    # step 2, then 3
    visualdl.log({"a": 5}, step=10)           # step 10 stays open (step= without commit)
    visualdl.log({"b": 6})                    # step 10, then 11
    assert visualdl.run.step == 11
    visualdl.log({"a": 7}, step=12, commit=True)
    assert visualdl.run.step == 13
    with pytest.warns(UserWarning, match="step 3 is below the current step 13"):
        visualdl.log({"a": 8}, step=3)        # wandb drops it; it is kept here
    with pytest.warns(UserWarning, match="step 4 is below"):
        visualdl.log({"b": 9}, step=4, commit=True)  # and the step does not go back
    assert visualdl.run.step == 13
    with pytest.raises(TypeError, match="'bad'"):
        visualdl.log({"bad": object()}, step=20)  # refused: the step does not move
    assert visualdl.run.step == 13
    visualdl.finish()
    got = read()
    # in the order logged, as LogWriter keeps a series
    assert points(got, "r", "a") == [(0, 1), (1, 2), (2, 4), (10, 5), (12, 7), (3, 8)]
    assert points(got, "r", "b") == [(2, 3), (10, 6), (4, 9)]


@pytest.mark.parametrize("step, error", [(-1, ValueError), (1.5, TypeError),
                                         (True, TypeError), ("3", TypeError)])
def test_bad_step(step, error):
    visualdl.init(project="p", name="r")
    with pytest.raises(error, match="step"):
        visualdl.log({"a": 1}, step=step)
    assert visualdl.run.step == 0


def test_numbers_of_every_kind_and_nested_keys():
    visualdl.init(project="p", name="r")
    visualdl.log({"int": 3, "float": 0.5, "bool": True, "np": np.float32(0.25),
                  "np_int": np.int64(7), "zero_d": np.array(1.5),
                  "train": {"loss": 2.0, "deep": {"er": 1.0}}, "none": None})
    visualdl.finish()
    got = read()
    assert sorted(got.tags("r")["scalar"]) == ["bool", "float", "int", "np", "np_int",
                                               "train/deep/er", "train/loss", "zero_d"]
    values = {tag: points(got, "r", tag) for tag in got.tags("r")["scalar"]}
    assert values == {"int": [(0, 3)], "float": [(0, 0.5)], "bool": [(0, 1)],
                      "np": [(0, 0.25)], "np_int": [(0, 7)], "zero_d": [(0, 1.5)],
                      "train/loss": [(0, 2)], "train/deep/er": [(0, 1)]}


def test_a_str_is_logged_as_text():
    visualdl.init(project="p", name="r")
    visualdl.log({"note": "lr *halved*"})
    visualdl.finish()
    assert [(t.step, t.text) for t in read().texts("r", "note")] == [(0, "lr *halved*")]


@pytest.mark.parametrize("value, kind", [
    (object(), "object"), ([1, 2, 3], "list"), (np.zeros(3), "ndarray"), (b"x", "bytes"),
    ({1, 2}, "set"), ([visualdl.Histogram([1.0]), 2.0], "list"),
])
def test_a_value_that_cannot_be_logged_names_its_key(value, kind):
    visualdl.init(project="p", name="r")
    visualdl.log({"before": 1.0})
    with pytest.raises(TypeError, match=rf"log: the value of 'bad/key' is a {kind}, which "
                                        "cannot be logged"):
        visualdl.log({"first": 2.0, "bad": {"key": value}})
    assert visualdl.run.step == 1  # the refused call did not move the step
    visualdl.log({"after": 3.0})
    visualdl.finish()
    got = read()
    assert got.tags("r")["scalar"] == ["after", "before"]  # nothing of the refused call
    assert points(got, "r", "before") == [(0, 1)] and points(got, "r", "after") == [(1, 3)]


@pytest.mark.parametrize("data, error, message", [
    ([("a", 1)], TypeError, "log takes a dict of values, got list"),
    ({1: 2.0}, TypeError, "keys must be str, got 1"),
    ({"": 2.0}, ValueError, "tag must not be empty"),
])
def test_bad_dicts(data, error, message):
    visualdl.init(project="p", name="r")
    with pytest.raises(error, match=message):
        visualdl.log(data)


def test_log_after_finish():
    run = visualdl.init(project="p", name="r")
    visualdl.log({"a": 1})
    run.finish()
    assert visualdl.run is None
    with pytest.raises(RuntimeError, match="no run is open"):
        visualdl.log({"a": 2})
    with pytest.raises(RuntimeError, match="the run 'r' is finished"):
        run.log({"a": 2})
    visualdl.finish()  # nothing open: nothing to do
    run.finish()       # twice: nothing more
    assert points(read(), "r", "a") == [(0, 1)]


def test_alert_levels():
    visualdl.init(project="p", name="r")
    visualdl.alert(title="low", text="acc below 0.1", level=visualdl.AlertLevel.ERROR)
    visualdl.log({"a": 1})
    visualdl.alert("again", "body", "WARN")
    with pytest.raises(ValueError, match="alert level must be one of INFO, WARN, ERROR, "
                                         "got 'LOUD'"):
        visualdl.alert("t", "x", level="LOUD")
    with pytest.raises(TypeError, match="alert text must be a str, got int"):
        visualdl.alert("t", 3)
    visualdl.finish()
    assert [(t.step, t.text) for t in read().texts("r", "alerts")] == [
        (0, "**ERROR: low**\n\nacc below 0.1"), (1, "**WARN: again**\n\nbody")]


def test_define_metric_and_watch_are_accepted():
    visualdl.init(project="p", name="r")
    visualdl.define_metric("val/*", step_metric="epoch", summary="max")
    visualdl.watch(object(), log="all", log_freq=10)
    visualdl.unwatch()
    visualdl.log({"a": 1})
    visualdl.finish()
    tags = read().tags("r")
    assert sorted(tags) == ["config", "scalar"]  # the config: the summary
    assert [t for t in tags["scalar"] if not t.startswith("system/")] == ["a"]


def test_summary_is_the_last_logged_value_unless_set():
    run = visualdl.init(project="p", name="r")
    visualdl.log({"loss": 2.0, "acc": 0.1, "name": "first"})
    run.summary["acc"] = 0.9                 # set by hand: wins ...
    visualdl.log({"loss": float("nan")})
    assert run.summary["acc"] == 0.9 and math.isnan(run.summary["loss"])
    visualdl.summary["best"] = np.float64(0.95)
    visualdl.log({"acc": 0.2, "name": "second"}, commit=False)  # ... until logged again
    assert run.summary["acc"] == 0.2 and run.summary.best == 0.95
    assert sorted(run.summary) == ["acc", "best", "loss", "name"]
    visualdl.finish()
    summary = read().config("r").nested["summary"]
    assert summary == {"acc": 0.2, "best": 0.95, "loss": "nan", "name": "second"}


def test_with_block_finishes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with visualdl.init(project="p", name="r") as run:
            run.log({"a": 1})
    assert run.finished and visualdl.run is None
    assert points(read(), "r", "a") == [(0, 1)]


def test_threads_logging_to_one_run_each_get_their_own_steps():
    """Without the run's lock two threads may read one step; caught often, not always."""
    import threading

    visualdl.init(project="p", name="r")

    def work(name):
        for _ in range(250):
            visualdl.log({name: 1.0})

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: a step read twice would show
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert visualdl.run.step == 1000
    visualdl.finish()
    got = read()
    steps = sorted(s for i in range(4) for s, _ in points(got, "r", f"t{i}"))
    assert steps == list(range(1000))
