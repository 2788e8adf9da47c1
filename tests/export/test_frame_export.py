"""``LogReader.scalars_frame`` and ``visualdl export --format parquet``: the values are what
was written, the Parquet files hold the same rows."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from visualdl import LogReader, LogWriter


@pytest.fixture
def pandas():
    """scalars_frame's pandas (the analysis extra; the test extra has it)."""
    return pytest.importorskip("pandas")


@pytest.fixture
def pq(pandas):
    """pyarrow's parquet, which the export writes with (the analysis extra)."""
    return pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def logdir(tmp_path):
    root = tmp_path / "logs"
    for r in range(3):
        with LogWriter(logdir=str(root / f"lr{r}")) as w:
            for step in range(0, 200, 2):
                w.add_scalar("train/loss", r + 1.0 / (step + 1), step, walltime=1e9 + step)
                if step % 10 == 0:
                    w.add_scalar("eval/acc", r * 0.1 + step / 1000, step, walltime=2e9 + step)
            w.add_hparams({"lr": 10.0 ** -r, "opt": "adam" if r else "sgd", "bs": 32 * (r + 1)},
                          ["eval/acc"])
    return root


def _expected(r: int, tag: str) -> tuple[list[int], list[float], list[float]]:
    if tag == "train/loss":
        steps = list(range(0, 200, 2))
        return steps, [1e9 + s for s in steps], [r + 1.0 / (s + 1) for s in steps]
    steps = list(range(0, 200, 10))
    return steps, [2e9 + s for s in steps], [r * 0.1 + s / 1000 for s in steps]


def test_scalars_frame_is_long_form_with_every_point(logdir, pandas):
    df = LogReader(str(logdir)).scalars_frame()
    assert list(df.columns) == ["run", "tag", "step", "wall_time", "value"]
    assert str(df.step.dtype) == "int64" and str(df.value.dtype) == "float64"
    assert len(df) == 3 * (100 + 20)
    for r in range(3):
        for tag in ("train/loss", "eval/acc"):
            part = df[(df.run == f"lr{r}") & (df.tag == tag)]
            steps, walls, values = _expected(r, tag)
            assert part.step.tolist() == steps
            assert part.wall_time.tolist() == walls
            np.testing.assert_array_equal(part.value.to_numpy(), values)


def test_scalars_frame_selects_runs_and_tags(logdir, pandas):
    reader = LogReader(str(logdir))
    df = reader.scalars_frame(runs=["lr2", "lr0"], tags=["eval/acc"])
    assert set(df.run) == {"lr0", "lr2"} and set(df.tag) == {"eval/acc"}
    assert len(df) == 40
    one = reader.scalars_frame(runs="lr1", tags="train/loss")
    assert one.value.tolist() == _expected(1, "train/loss")[2]
    with pytest.raises(KeyError, match="nope"):
        reader.scalars_frame(runs=["nope"])
    with pytest.raises(KeyError, match="no/such"):
        reader.scalars_frame(tags=["no/such"])
    empty = LogReader(str(logdir / "missing"), load=True).scalars_frame()
    assert len(empty) == 0 and list(empty.columns) == ["run", "tag", "step", "wall_time", "value"]


def test_scalars_frame_without_pandas_names_the_extra(logdir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(ImportError, match=r'pip install "visualdl\[analysis\]"'):
        LogReader(str(logdir)).scalars_frame()


def test_export_parquet_holds_the_same_rows(logdir, tmp_path, pq):
    out = tmp_path / "out"
    result = run_cli("export", "--format", "parquet", str(logdir), str(out))
    assert result.returncode == 0, result.stderr
    assert "360 scalar points" in result.stdout
    table = pq.read_table(out / "scalars.parquet")
    assert table.column_names == ["run", "tag", "step", "wall_time", "value"]
    exported = table.to_pandas()
    frame = LogReader(str(logdir)).scalars_frame()
    for col in ("run", "tag"):
        assert exported[col].astype(str).tolist() == frame[col].astype(str).tolist()
    for col in ("step", "wall_time", "value"):
        np.testing.assert_array_equal(exported[col].to_numpy(), frame[col].to_numpy())
    hp = pq.read_table(out / "hparams.parquet").to_pydict()
    assert hp["run"] == ["lr0", "lr1", "lr2"]
    assert hp["lr"] == [1.0, 0.1, 0.01]
    assert hp["opt"] == ["sgd", "adam", "adam"]
    assert hp["bs"] == [32, 64, 96]
    assert hp["metric_tags"] == [["eval/acc"]] * 3


def test_export_refuses_a_missing_logdir(tmp_path):
    result = run_cli("export", "--format", "parquet", str(tmp_path / "nope"),
                     str(tmp_path / "out"))
    assert result.returncode == 2 and "does not exist" in result.stderr
    bad = run_cli("export", "--format", "csv", str(tmp_path), str(tmp_path / "out"))
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
