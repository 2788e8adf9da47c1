"""Config entries that were not written by add_config (not JSON, not an object, not UTF-8
JSON) are skipped and counted as bad records; the run's good config still serves."""

from __future__ import annotations

import pytest

from tests.helpers.http import client_of
from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame
from visualdl.format.record_pb2 import Record

BAD = {"not json": "{model: 1", "a list": "[1, 2]", "a number": "3", "empty": ""}


def _logdir(tmp_path, texts):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_config({"model": {"depth": 2}})
        w.add_scalar("loss", 1.0, 0)
        path = w.file_name
    with open(path, "ab") as f:
        for text in texts:
            record = Record()
            entry = record.entries.add()
            entry.config.wall_time, entry.config.json = 5.0, text
            f.write(frame(record.SerializeToString()))
    return tmp_path


@pytest.mark.parametrize("name", list(BAD))
def test_bad_config_entry_is_skipped_and_counted(tmp_path, name):
    reader = LogReader(str(_logdir(tmp_path, [BAD[name]])))
    assert reader.errors == 1, reader.error_messages
    assert reader.config("run").flat == {"model.depth": 2}


def test_server_serves_the_good_config(tmp_path):
    with client_of(_logdir(tmp_path, list(BAD.values()))) as client:
        assert client.json("/api/info")["errors"] == len(BAD)
        assert client.json("/api/config", run="run")["flat"] == {"model.depth": 2}
        assert client.json("/api/runs/config")["same"] == {"model.depth": 2}
