"""The default series of a data-parallel run when rank 0 did not log a tag: the lowest rank
that did, not nothing (a user who ran only rank 1's writer, or a tag only rank 1 logs)."""

from __future__ import annotations

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter


def _write(logdir, run: str, ranks: dict[int, list[str]]) -> None:
    for rank, tags in ranks.items():
        with LogWriter(logdir=str(logdir / run), rank=rank, world_size=2) as w:
            for tag in tags:
                for step in range(3):
                    w.add_scalar(tag, 10.0 * rank + step, step)


def test_a_tag_rank_0_never_logged_shows_the_lowest_rank_that_did(tmp_path):
    _write(tmp_path, "only1", {1: ["train/loss"]})
    _write(tmp_path, "dp", {0: ["train/loss"], 1: ["train/loss", "rank1/extra"]})
    reader = LogReader(str(tmp_path))
    assert reader.scalars("only1", "train/loss").values.tolist() == [10.0, 11.0, 12.0]
    assert reader.default_rank("only1", "train/loss") == 1
    assert reader.scalars("dp", "train/loss").values.tolist() == [0.0, 1.0, 2.0]  # rank 0's
    assert reader.default_rank("dp", "train/loss") == 0
    assert reader.scalars("dp", "rank1/extra").values.tolist() == [10.0, 11.0, 12.0]
    assert reader.scalars("dp", "rank1/extra", rank=1).values.tolist() == [10.0, 11.0, 12.0]
    with client_of(str(tmp_path)) as api:
        body = api.json("/api/scalars", run="only1", tag="train/loss")
        assert body["total"] == 3 and body["values"] == [10.0, 11.0, 12.0]
        assert body["default_rank"] == 1 and "rank" not in body
        assert api.json("/api/scalars", run="dp", tag="rank1/extra")["default_rank"] == 1
