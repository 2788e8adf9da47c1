"""Table and tensor records with valid CRCs but contents that do not add up: refused at
index time (a bad record, counted) when the index can tell, else a 422 naming the problem
when the step is opened; never a 500, and the good entries still served."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame
from visualdl.format.record_pb2 import Record


def _table(columns, rows, data, blobs=0):
    def fill(entry, step):
        msg = entry.table
        msg.tag, msg.step, msg.wall_time = "t", step, 1.0 + step
        msg.columns[:] = columns
        msg.rows, msg.columns_json = rows, data
        for _ in range(blobs):
            msg.blobs.add(mime="image/png", data=b"not a png")
    return fill


def _tensor(dtype, shape, data):
    def fill(entry, step):
        msg = entry.tensor
        msg.tag, msg.step, msg.wall_time = "w", step, 1.0 + step
        msg.dtype, msg.data = dtype, data
        msg.shape[:] = shape
    return fill


REFUSED = [  # the index refuses these: bad records
    _table([], 0, b"[]"),
    _table(["a"], -1, b"[[]]"),
    _tensor("<U4", [1], b"abcd"),
    _tensor("<f4", [3], b"\0" * 8),
    _tensor("nonsense", [1], b"\0"),
    _tensor("<f4", [-1], b""),
]
UNREADABLE = {  # step: what opening it says
    7: (_table(["a"], 2, b"[[1]]"), "do not form 1 columns of 2 rows"),
    8: (_table(["a"], 1, b"[[1,"), "not valid JSON"),
    9: (_table(["a", "b"], 1, b"[[1]]"), "do not form 2 columns of 1 rows"),
}


@pytest.fixture()
def logdir(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_table("t", {"a": [1]}, 0)
        w.add_tensor("w", np.ones(2), 0)
        path = w.file_name
    crafted = [(i + 1, fill) for i, fill in enumerate(REFUSED)]
    crafted += [(step, fill) for step, (fill, _) in UNREADABLE.items()]
    crafted.append((10, _table(["a"], 1, b'[[{"blob": 3}]]', blobs=1)))
    with open(path, "ab") as f:
        for step, fill in crafted:
            record = Record()
            fill(record.entries.add(), step)
            f.write(frame(record.SerializeToString()))
    return tmp_path


def test_reader_counts_what_the_index_refuses(logdir):
    reader = LogReader(str(logdir))
    assert reader.errors == len(REFUSED), reader.error_messages
    assert [e.step for e in reader.events("run", "table", "t")] == [0, 7, 8, 9, 10]
    assert [e.step for e in reader.tensors("run", "w")] == [0]
    with pytest.warns(RuntimeWarning) as caught:
        tables = reader.tables("run", "t")
    assert [t.step for t in tables] == [0] and tables[0].rows == [(1,)]
    said = [str(w.message) for w in caught]
    assert len(said) == 4 and "table 't' at step 7" in said[0]
    assert "do not form 1 columns of 2 rows" in said[0]
    assert "step 10" in said[3] and "names blob 3 of 1" in said[3]


def test_server_answers_4xx_for_what_cannot_be_read(logdir):
    with client_of(logdir) as api:
        assert api.json("/api/info")["errors"] == len(REFUSED)
        assert api.json("/api/tables", run="run", tag="t")["steps"] == [0, 7, 8, 9, 10]
        assert api.json("/api/tables/data", run="run", tag="t", step=0)["data"] == [[1]]
        for step, (_, words) in UNREADABLE.items():
            r = api.get("/api/tables/data", run="run", tag="t", step=step)
            assert r.status_code == 422 and words in r.json()["error"], (step, r.text)
        # a cell naming a blob the table lacks: the cells are served (the view marks it
        # missing) and the blob itself is a 404
        assert api.json("/api/tables/data", run="run", tag="t", step=10)["data"] == [[{"blob": 3}]]
        r = api.get("/api/tables/blob", run="run", tag="t", step=10, blob=3)
        assert r.status_code == 404
        assert api.json("/api/tensors", run="run", tag="w")["steps"] == [0]
