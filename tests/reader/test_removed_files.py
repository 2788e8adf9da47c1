"""Files removed while a reader (a dashboard) is open: their points go with them.

Writers never delete files, so a removed file is a user's doing, most often a run folder
removed to run the job again: the new run's points must not be drawn beside the old ones."""

from __future__ import annotations

import shutil

import numpy as np

from visualdl import LogReader, LogWriter


def _write(folder, value: float, steps: int = 10, **kw) -> None:
    with LogWriter(logdir=str(folder), **kw) as w:
        for step in range(1, steps + 1):
            w.add_scalar("loss", value, step)


def test_a_run_removed_and_written_again_shows_only_the_new_points(tmp_path):
    _write(tmp_path / "run", 1.0)
    reader = LogReader(str(tmp_path))
    assert reader.scalars("run", "loss").values.tolist() == [1.0] * 10
    version = reader.version
    shutil.rmtree(tmp_path / "run")
    reader.reload()
    assert reader.runs() == [] and reader.version > version
    _write(tmp_path / "run", 2.0, steps=6)
    reader.reload()
    got = reader.scalars("run", "loss")
    assert got.steps.tolist() == list(range(1, 7)) and got.values.tolist() == [2.0] * 6


def test_one_file_removed_keeps_the_others_points(tmp_path):
    _write(tmp_path / "run", 1.0, rank=0, world_size=2)
    _write(tmp_path / "run", 5.0, rank=1, world_size=2)
    reader = LogReader(str(tmp_path))
    assert reader.ranks("run") == [0, 1]
    [rank1] = [p for p in (tmp_path / "run").iterdir() if "rank1" in p.name]
    rank1.unlink()
    reader.reload()
    assert reader.ranks("run") == [0]
    assert np.array_equal(reader.scalars("run", "loss").values, [1.0] * 10)
    _write(tmp_path / "other", 3.0)  # a run added meanwhile is read as usual
    reader.reload()
    assert reader.runs() == ["other", "run"]


def test_nothing_is_forgotten_while_files_stay(tmp_path):
    _write(tmp_path / "run", 1.0)
    reader = LogReader(str(tmp_path))
    version = reader.version
    reader.reload()
    assert reader.version == version and reader.runs() == ["run"]
    assert reader.scalars("run", "loss").values.tolist() == [1.0] * 10
