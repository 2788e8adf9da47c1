"""`visualdl inspect` / `python -m visualdl.reader`: the summary names what the logdir holds."""

import io
import subprocess
import sys

import numpy as np

from visualdl import LogWriter
from visualdl.reader.inspect import summarize


def test_summary_lists_runs_kinds_counts_and_steps(tmp_path):
    with LogWriter(logdir=str(tmp_path / "exp")) as w:
        for step in range(5, 15):
            w.add_scalar("train/loss", 1.0 / step, step)
        w.add_image("img", np.zeros((2, 2, 3), np.uint8), 7)
        w.add_hparams({"lr": 0.1}, ["train/loss"])
    out = io.StringIO()
    assert summarize([str(tmp_path)], out) == 0
    text = out.getvalue()
    assert "1 run(s)" in text and "run exp: 1 file(s)" in text
    assert "scalar     train/loss  (10 points, steps 5..14)" in text
    assert "image      img  (1 points, steps 7)" in text
    assert "hparams    1 values, metrics: train/loss" in text
    assert "bad records or files: 0" in text


def test_system_metrics_are_counted_as_their_own_kind(tmp_path):
    """System metrics are scalars under ``system/<host>/...`` listed as the ``system`` kind:
    inspect counts them like scalars (it once asked for them as events and failed)."""
    with LogWriter(logdir=str(tmp_path / "exp"), system_metrics=False) as w:
        w.add_scalar("loss", 0.5, 0)
        for step in range(3):
            w.add_scalar("system/host1/cpu/percent", 10.0 * step, step)
    out = io.StringIO()
    assert summarize([str(tmp_path)], out) == 0
    text = out.getvalue()
    assert "system     system/host1/cpu/percent  (3 points, steps 0..2)" in text
    assert "scalar     loss  (1 points, steps 0)" in text


def test_bad_records_are_reported_with_exit_code_1(tmp_path):
    with LogWriter(logdir=str(tmp_path / "exp")) as w:
        w.add_scalar("x", 1.0, 0)
    (tmp_path / "exp" / "vdlrecords.0.h.0.log").write_bytes(b"garbage that is not a record")
    done = subprocess.run([sys.executable, "-m", "visualdl.reader", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "bad records or files: 1" in done.stdout
    assert "not a visualdl record file" in done.stdout


def test_missing_path_exits_2(tmp_path):
    out = io.StringIO()
    assert summarize([str(tmp_path / "nope")], out) == 2
    assert "no such file or directory" in out.getvalue()
