"""Combined charts as data: add_scalars records its chart (once per new key set), custom
layouts are checked and stored (the last one wins), the reader hands them out as events of
the ``custom_scalars`` kind, and /api/scalars/layouts merges them over runs."""

from __future__ import annotations

import csv
import io

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.format.record_pb2 import Entry, Record
from visualdl.format.version import FORMAT_MINOR
from visualdl.reader import LogReader

LAYOUT = {
    "Losses": {"train vs val": ["Multiline", [r"^loss/(train|val)$", r"^acc_"]]},
    "Bands": {"acc band": ["Margin", ["acc", "acc_lo", "acc_hi"]]},
}


def _events(logdir, run):
    reader = LogReader(str(logdir))
    return reader.events(run, "custom_scalars", "custom_scalars")


def test_add_scalars_records_its_chart_once_per_new_key_set(tmp_path):
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        for step in range(1000):
            w.add_scalars("loss", {"train": step, "val": 2 * step}, step)
        w.add_scalars("loss", {"test": 7.0}, 1000)  # a new key: the chart is recorded again
        w.add_scalars("loss", {"train": 1.0, "test": 7.0}, 1001)  # nothing new
    events = _events(tmp_path, "a")
    assert [(e.main_tag, e.keys, e.series) for e in events] == [
        ("loss", ("train", "val"), ("loss/train", "loss/val")),
        ("loss", ("train", "val", "test"), ("loss/train", "loss/val", "loss/test")),
    ]
    reader = LogReader(str(tmp_path))
    assert reader.tags("a")["scalar"] == ["loss/test", "loss/train", "loss/val"]
    assert reader.scalars("a", "loss/val").values[999] == 1998.0


def test_custom_layout_roundtrips_and_the_last_one_wins(tmp_path):
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        w.add_custom_scalars({"Old": {"x": ["Multiline", ["x"]]}})
        w.add_custom_scalars(LAYOUT)
    events = _events(tmp_path, "a")
    assert [e.layout for e in events] == [{"Old": {"x": ["Multiline", ["x"]]}}, LAYOUT]


def test_the_format_minor_is_raised_and_the_entry_is_field_13(tmp_path):
    assert FORMAT_MINOR >= 4  # 1.4 added CustomScalars; later minors add other messages
    assert Entry.DESCRIPTOR.fields_by_name["custom_scalars"].number == 13
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        w.add_custom_scalars(LAYOUT)
    reader = LogReader(str(tmp_path))
    reader.tags("a")
    (state,) = reader.files("a")
    assert state.header.format_minor == FORMAT_MINOR


@pytest.mark.parametrize("layout, error, words", [
    ({}, TypeError, "layout must be a non-empty dict"),
    ([1], TypeError, "layout must be a non-empty dict"),
    ({"C": []}, TypeError, "layout['C'] must be a non-empty dict"),
    ({"C": {"t": "Multiline"}}, TypeError, "layout['C']['t'] must be"),
    ({"C": {"t": ["Bars", ["x"]]}}, ValueError, "layout['C']['t']: chart type must be"),
    ({"C": {"t": ["Multiline", []]}}, ValueError, "layout['C']['t']: a Multiline chart needs"),
    ({"C": {"t": ["Multiline", ["loss/("]]}}, ValueError, "'loss/(' is not a valid regex"),
    ({"C": {"t": ["Multiline", "loss"]}}, TypeError, "layout['C']['t']: the tags must be a list"),
    ({"C": {"t": ["Margin", ["v", "lo"]]}}, ValueError, "takes [value_tag, lower_tag, upper_tag]"),
    ({"C": {"t": ["Margin", ["v", "lo", 3]]}}, TypeError, "layout['C']['t']: each tag"),
    ({"": {"t": ["Multiline", ["x"]]}}, TypeError, "a category name"),
    ({"C": {"": ["Multiline", ["x"]]}}, TypeError, "a chart title"),
])
def test_bad_layouts_are_refused_naming_category_and_title(tmp_path, layout, error, words):
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        with pytest.raises(error) as info:
            w.add_custom_scalars(layout)
    assert words in str(info.value)


def test_bad_add_scalars_keys_are_refused(tmp_path):
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        with pytest.raises((TypeError, ValueError)):
            w.add_scalars("m", {"": 1.0}, 0)
        with pytest.raises(TypeError, match="tag_scalar_dict must be a dict"):
            w.add_scalars("m", [1.0], 0)


def test_a_damaged_layout_entry_is_skipped_with_a_message(tmp_path):
    """A hand-made entry whose layout is not TensorBoard's dictionary is refused by the
    reader (with its reason), and the rest of the file still reads."""
    from visualdl.writer.record_file import RecordFileWriter

    with LogWriter(logdir=str(tmp_path / "a")) as w:
        w.add_scalar("x", 1.0, 0)
        path = w.file_name
    entry = Entry()
    entry.custom_scalars.layout_json = '{"C": {"t": ["Pie", ["x"]]}}'
    f = RecordFileWriter(path)
    f.write([Record(entries=[entry]).SerializeToString()])
    f.close()
    reader = LogReader(str(tmp_path))
    assert reader.tags("a") == {"scalar": ["x"]}
    assert any("chart type must be" in m for m in reader.error_messages)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("combined")
    for run, scale in (("r1", 1.0), ("r2", 2.0)):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(20):
                w.add_scalars("loss", {"train": scale * step, "val": scale * step + 0.5,
                                       "test": scale * step + 1.0}, step, walltime=1e9 + step)
                w.add_scalar("acc", step / 20, step, walltime=1e9 + step)
            w.add_custom_scalars({"Mine": {"only r" + run[-1]: ["Multiline", ["^acc$"]],
                                           "shared": ["Multiline", ["^loss/" + run]]}},
                                 walltime=1e9 + (100 if run == "r2" else 50))
    with LogWriter(logdir=str(root / "old")) as w:  # no grouping recorded: nothing to merge
        w.add_scalar("loss/train", 1.0, 0)
    with serving(root) as handle:
        yield Client(handle.url)


def test_layouts_route_merges_charts_and_layouts_over_runs(api):
    body = api.json("/api/scalars/layouts")
    assert body["charts"] == [{"title": "loss", "keys": ["train", "val", "test"],
                               "tags": ["loss/train", "loss/val", "loss/test"],
                               "runs": ["r1", "r2"]}]
    (mine,) = body["layout"]
    assert mine["category"] == "Mine"
    charts = {c["title"]: c for c in mine["charts"]}
    assert set(charts) == {"only r1", "only r2", "shared"}
    # r2's layout is the later one: its definition of "shared" wins
    assert charts["shared"] == {"title": "shared", "type": "multiline", "tags": ["^loss/r2"],
                                "runs": ["r1", "r2"]}
    assert charts["only r1"]["runs"] == ["r1"]
    etag = api.get("/api/scalars/layouts").headers["ETag"]
    again = api.get("/api/scalars/layouts", headers={"If-None-Match": etag})
    assert again.status_code == 304


def test_download_of_a_combined_chart_has_one_column_per_line(api):
    params = {"run": ["r1", "r2", "old"], "tag": ["loss/train", "loss/val"], "format": "csv"}
    response = api.get("/api/scalars/download", params)
    assert response.status_code == 200, response.text
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["step", "r1/loss/train", "r1/loss/val", "r2/loss/train", "r2/loss/val",
                       "old/loss/train"]
    assert len(rows) == 21  # steps 0..19
    assert rows[4] == ["3", "3.0", "3.5", "6.0", "6.5", ""]
    assert rows[1][-1] == "1.0"
    body = api.json("/api/scalars/download", {**params, "format": "json"})
    assert [(s["run"], s["tag"]) for s in body["series"]] == [
        ("r1", "loss/train"), ("r1", "loss/val"), ("r2", "loss/train"), ("r2", "loss/val"),
        ("old", "loss/train")]
    assert body["series"][2]["values"][5] == 10.0
    missing = api.get("/api/scalars/download", {"run": "r1", "tag": ["nope", "nada"]})
    assert missing.status_code == 404 and "error" in missing.json()


def test_old_logs_have_no_layouts(tmp_path):
    with LogWriter(logdir=str(tmp_path / "a")) as w:
        w.add_scalar("loss/train", 1.0, 0)
    with serving(tmp_path) as handle:
        assert Client(handle.url).json("/api/scalars/layouts") == {"charts": [], "layout": []}


def test_inspect_summarizes_a_run_with_charts(tmp_path):
    import io as _io

    from visualdl.reader.inspect import summarize

    with LogWriter(logdir=str(tmp_path / "a")) as w:
        w.add_scalars("loss", {"train": 1.0}, 0)
        w.add_custom_scalars(LAYOUT)
    out = _io.StringIO()
    assert summarize([str(tmp_path)], out) == 0
    assert "custom_scalars custom_scalars  (2 points" in out.getvalue()
