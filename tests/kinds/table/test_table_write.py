"""add_table read back through LogReader: every form of data (dict of columns, list of rows,
rows as dicts, a DataFrame), every sort of cell exactly, images stored once per table;
bad tables refused naming the tag, row and column, with what was logged before kept; and
tables through ``visualdl inspect``, ``visualdl convert`` and object storage."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from tests.convert.test_convert import assert_same_logs
from visualdl import Audio, LogReader, LogWriter, SummaryWriter
from visualdl.convert import convert
from visualdl.reader.inspect import summarize


def _log(tmp_path, *calls, run="r"):
    with LogWriter(logdir=str(tmp_path / run)) as w:
        for call in calls:
            call(w)
    return LogReader(str(tmp_path))


def test_dict_of_columns_reads_back_exactly(tmp_path):
    img = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    data = {"i": [1, np.int64(2), 3], "x": [0.5, float("nan"), float("-inf")],
            "flag": [True, None, np.bool_(False)], "s": ["a", "ü", ""],
            "img": [img, img.copy(), np.full((2, 2), 0.5)],
            "snd": [None, Audio(np.zeros(10, np.int16), 4000), None]}
    reader = _log(tmp_path, lambda w: w.add_table("t", data, 7))
    (table,) = reader.tables("r", "t")
    assert table.step == 7 and table.columns == ("i", "x", "flag", "s", "img", "snd")
    assert table.column("i") == (1, 2, 3)
    x = table.column("x")
    assert x[0] == 0.5 and math.isnan(x[1]) and x[2] == -math.inf
    assert table.column("flag") == (True, None, False)
    assert table.column("s") == ("a", "ü", "")
    a, b, gray = table.column("img")
    assert a is b  # the same pixels, stored once
    np.testing.assert_array_equal(a.array(), img)
    np.testing.assert_array_equal(gray.array(), np.full((2, 2, 1), 128, np.uint8))
    snd = table.column("snd")[1]
    assert snd.mime == "audio/wav" and snd.array().shape == (10, 1)
    msg = reader.load(reader.events("r", "table", "t")[0])
    assert len(msg.blobs) == 3 and table.rows[0][:4] == (1, 0.5, True, "a")


def test_list_of_rows_rows_as_dicts_and_pil_images(tmp_path):
    pil = Image.new("P", (4, 3))
    pil.putpalette([10, 20, 30] * 256)

    def log(w):
        w.add_table("rows", [[1, "a"], (2, "b")], 0, columns=["n", "s"])
        w.add_table("dicts", [{"n": 1, "s": "a"}, {"s": "b", "n": 2}], 0)
        w.add_table("pil", {"im": [pil]}, 0)
        w.add_table("array", np.array([[1.5, 2.0], [3.0, 4.0]]), 0, columns=["x", "y"])
    reader = _log(tmp_path, log)
    assert reader.tables("r", "rows")[0].rows == [(1, "a"), (2, "b")]
    assert reader.tables("r", "dicts")[0].rows == [(1, "a"), (2, "b")]
    assert reader.tables("r", "array")[0].rows == [(1.5, 2.0), (3.0, 4.0)]
    pixels = reader.tables("r", "pil")[0].column("im")[0].array()
    assert pixels.shape == (3, 4, 3) and tuple(pixels[0, 0]) == (10, 20, 30)


def test_dataframe_in_and_out(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"epoch": [1, 2], "acc": [0.5, 0.75], "note": ["x", None]})
    reader = _log(tmp_path, lambda w: w.add_table("df", frame, 3))
    table = reader.tables("r", "df")[0]
    assert table.columns == ("epoch", "acc", "note")
    assert table.rows == [(1, 0.5, "x"), (2, 0.75, None)]
    pd.testing.assert_frame_equal(table.to_pandas(), frame)


def test_summary_writer_add_table(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path / "sw")) as w:
        w.add_table("t", {"a": [1]}, global_step=4)
    assert LogReader(str(tmp_path)).tables("sw", "t")[0].step == 4


@pytest.mark.parametrize("data, columns, error, words", [
    ([[1, 2], [3]], ["a", "b"], ValueError, "row 1 has 1 cells, expected 2"),
    ({"a": [1, 2], "b": [1]}, None, ValueError, "column 'b' has 1 cells, column 'a' has 2"),
    ({"a": [1, object()]}, None, TypeError, "row 1, column 'a': a cell of type object"),
    ({"a": [np.zeros(3)]}, None, ValueError, "row 0, column 'a': an array cell is an image"),
    ({"a": [np.full((2, 2), 7.0)]}, None, ValueError, "row 0, column 'a': float images"),
    ({"a": [1, Audio(np.zeros(4), 0)]}, None, ValueError, "row 1, column 'a': sample_rate"),
    ({"a": ["ok", "x\ud800"]}, None, ValueError, "row 1, column 'a': the text is not valid"),
    ({"a": [{"x": 1}]}, None, TypeError, "row 0, column 'a': a cell of type dict"),
    ([[1, 2]], ["a", "a"], ValueError, "column 'a' appears twice"),
    ([[1, 2]], None, ValueError, "needs columns="),
    ({"a": [1]}, ["b"], ValueError, "names ['b'], which the dict does not have"),
    ([{"a": 1}, {"b": 2}], None, ValueError, "row 1 has keys ['b'], expected ['a']"),
    ("text", None, TypeError, "a table is a pandas DataFrame"),
    ({}, None, ValueError, "at least one column"),
])
def test_bad_tables_name_the_problem_and_lose_nothing(tmp_path, data, columns, error, words):
    with LogWriter(logdir=str(tmp_path / "r")) as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_table("good", {"a": [1]}, 0)
        with pytest.raises(error) as info:
            w.add_table("bad/tag", data, 1, columns=columns)
        w.add_scalar("loss", 0.25, 1)
    assert "'bad/tag'" in str(info.value) and words in str(info.value), str(info.value)
    reader = LogReader(str(tmp_path))
    assert list(reader.scalars("r", "loss").values) == [0.5, 0.25]
    assert reader.tags("r")["table"] == ["good"]


def test_dataframe_with_other_columns_is_refused(tmp_path):
    pd = pytest.importorskip("pandas")
    with LogWriter(logdir=str(tmp_path / "r")) as w, pytest.raises(ValueError, match="differ"):
        w.add_table("df", pd.DataFrame({"a": [1]}), 0, columns=["b"])


def test_inspect_convert_and_object_storage_carry_tables_and_tensors(tmp_path):
    def log(w):
        for step in (1, 2):
            w.add_table("t", {"n": [step], "img": [np.full((2, 2, 3), step, np.uint8)]}, step)
        w.add_tensor("w", np.arange(4, dtype=np.float32), 3)
    _log(tmp_path / "src", log)
    out = io.StringIO()
    summarize([str(tmp_path / "src")], out)
    text = out.getvalue()
    assert "table      t  (2 points, steps 1..2)" in text
    assert "tensor     w  (1 points, steps 3)" in text
    convert(tmp_path / "src", tmp_path / "dst")
    src, dst = LogReader(str(tmp_path / "src")), LogReader(str(tmp_path / "dst"))
    assert_same_logs(src, dst)
    assert dst.tables("r", "t")[1].column("n") == (2,)
    np.testing.assert_array_equal(dst.tensors("r", "w")[0].value, np.arange(4))


def test_tables_in_object_storage_are_read_once(tmp_path):
    pytest.importorskip("fsspec")
    url = f"memory://vdl-tests/tables-{tmp_path.name}"
    with LogWriter(logdir=f"{url}/r") as w:
        w.add_table("t", {"img": [np.full((3, 3, 3), 9, np.uint8)], "n": [1.5]}, 0)
    reader = LogReader(url)
    ref = reader.events("r", "table", "t")[0]
    first = reader.tables("r", "t")[0]
    gets = reader.storage_stats().gets
    again = reader.tables("r", "t")[0]
    assert again == first and reader.storage_stats().gets == gets  # from the blob cache
    assert reader.storage_stats().cache_hits >= 1 and ref.meta == {"rows": 1, "columns": 2}
    assert tuple(first.column("img")[0].array()[1, 1]) == (9, 9, 9)
