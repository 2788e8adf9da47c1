"""visualdl.Image / Histogram / Table / Video / Audio: what wandb's classes accept, read
back as pixels, counts, cells and media; bad input refused where it is made."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image as PILImage

import visualdl
from tests.tracking.common import read


def _pixels(reader, tag):
    (ref,) = reader.images("r", tag)
    return np.asarray(PILImage.open(io.BytesIO(reader.load(ref).png)))


def test_images_from_arrays_pil_and_files(tmp_path):
    rgb = np.arange(2 * 5 * 3, dtype=np.uint8).reshape(2, 5, 3)
    PILImage.fromarray(rgb).save(tmp_path / "x.png")
    visualdl.init(project="p", name="r")
    visualdl.log({
        "hwc": visualdl.Image(rgb),
        "chw": visualdl.Image(rgb.transpose(2, 0, 1)),        # C x H x W, as wandb reads it
        "gray": visualdl.Image(np.array([[0.0, 0.5], [1.0, 0.25]])),  # floats in [0, 1]
        "signed": visualdl.Image(np.array([[-1.0, 1.0]])),    # shifted, then scaled
        "pil": visualdl.Image(PILImage.fromarray(rgb)),
        "file": visualdl.Image(str(tmp_path / "x.png")),
    })
    visualdl.finish()
    got = read()
    for tag in ("hwc", "chw", "pil", "file"):
        assert np.array_equal(_pixels(got, tag), rgb), tag
    assert _pixels(got, "gray").tolist() == [[0, 127], [255, 63]]
    assert _pixels(got, "signed").tolist() == [[0, 255]]


@pytest.mark.parametrize("data, error, message", [
    (np.zeros((2, 2, 2)), ValueError, r"H x W, H x W x C or C x H x W .* shape \(2, 2, 2\)"),
    (np.zeros(5), ValueError, r"got shape \(5,\)"),
    (np.zeros((0, 3)), ValueError, "is empty"),
    (np.array([["a"]]), TypeError, "an array of numbers, a PIL image or a file path"),
    ("missing.png", FileNotFoundError, "no file 'missing.png'"),
])
def test_bad_images(data, error, message):
    with pytest.raises(error, match=message):
        visualdl.Image(data)


def test_histograms_of_values_and_of_numpy():
    visualdl.init(project="p", name="r")
    visualdl.log({"values": visualdl.Histogram([1, 1, 2, 3], num_bins=2),
                  "np": visualdl.Histogram(np_histogram=([1, 0, 3], [0.0, 1.0, 2.0, 4.0]))})
    visualdl.finish()
    got = read()
    (values,) = got.histograms("r", "values")
    assert values.counts.tolist() == [2, 2] and values.edges.tolist() == [1, 2, 3]
    (raw,) = got.histograms("r", "np")
    assert raw.counts.tolist() == [1, 0, 3] and raw.edges.tolist() == [0, 1, 2, 4]
    assert (raw.min, raw.max, raw.count) == (0, 4, 4)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "either sequence or np_histogram"),
    ({"sequence": [1], "np_histogram": ([1], [0, 1])}, "either sequence or np_histogram"),
    ({"sequence": []}, "must not be empty"),
    ({"sequence": [1], "num_bins": 0}, "num_bins must be an integer in 1..10000"),
    ({"np_histogram": ([1, 2], [0, 1])}, "2 edges for 2 counts"),
    ({"np_histogram": [1, 2, 3]}, r"must be \(counts, edges\)"),
    ({"np_histogram": ([0, 0], [0, 1, 2])}, "bucket_counts are all zero"),
    ({"np_histogram": ([1, -1], [0, 1, 2])}, "bucket_counts must be finite and non-neg"),
])
def test_bad_histograms(kwargs, message):
    with pytest.raises(ValueError, match=message):
        visualdl.Histogram(**kwargs)


def test_tables_from_rows_dataframes_and_media_cells():
    pd = pytest.importorskip("pandas")
    image = np.full((2, 2, 3), 200, np.uint8)
    table = visualdl.Table(columns=["name", "score"])
    table.add_data("a", 0.5)
    table.add_data("b", 1.5)
    table.add_column("picture", [visualdl.Image(image), image])
    frame = visualdl.Table(dataframe=pd.DataFrame({"x": [1, 2], "y": ["u", "v"],
                                                   "z": [0.5, 1.0]}))
    visualdl.init(project="p", name="r")
    visualdl.log({"rows": table, "frame": frame})
    visualdl.finish()
    got = read()
    (rows,) = got.tables("r", "rows")
    assert rows.columns == ("name", "score", "picture")
    assert rows.data[:2] == (("a", "b"), (0.5, 1.5))
    (frame_back,) = got.tables("r", "frame")
    assert frame_back.columns == ("x", "y", "z")
    assert frame_back.data == ((1, 2), ("u", "v"), (0.5, 1.0))
    assert [type(v) for v in frame_back.data[0]] == [int, int]  # each column keeps its type
    with pytest.raises(ValueError, match=r"Table.add_data: 1 values for 3 columns"):
        table.add_data("c")


def test_video_and_audio_with_captions():
    frames = np.zeros((3, 3, 8, 8), np.uint8)  # T x C x H x W, wandb's layout
    frames[:, 0] = 255
    samples = np.sin(np.linspace(0, 6.28, 800)).astype(np.float32)
    visualdl.init(project="p", name="r")
    visualdl.log({"clip": visualdl.Video(frames, fps=2, caption="red"),
                  "sound": visualdl.Audio(samples, sample_rate=8000, caption="sine")})
    visualdl.finish()
    got = read()
    (video,) = got.videos("r", "clip")
    assert len(got.load(video).data) > 0
    (audio,) = got.audio("r", "sound")
    assert got.load(audio).sample_rate == 8000
    assert [t.text for t in got.texts("r", "clip/caption")] == ["red"]
    assert [t.text for t in got.texts("r", "sound/caption")] == ["sine"]
    with pytest.raises(TypeError, match="a file path is not supported"):
        visualdl.Video("clip.mp4")
    with pytest.raises(ValueError, match=r"T x C x H x W .* got shape \(8, 8\)"):
        visualdl.Video(np.zeros((8, 8)))


def test_a_bad_table_cell_refuses_the_whole_call():
    visualdl.init(project="p", name="r")
    visualdl.log({"ok": 1.0})
    table = visualdl.Table(columns=["c"], data=[[object()]])
    with pytest.raises(TypeError, match=r"'t': row 0, column 'c': a cell of type object"):
        visualdl.log({"a": 2.0, "t": table})
    visualdl.finish()
    got = read()
    assert got.tags("r")["scalar"] == ["ok"] and "table" not in got.tags("r")


@pytest.mark.parametrize("value, error, message", [
    (lambda: visualdl.Audio(np.zeros(10), sample_rate=0), ValueError,
     "'s': sample_rate must be in 1..1000000"),
    (lambda: "bad \ud800 text", ValueError, "'s': the text is not valid Unicode"),
])
def test_bad_audio_or_text_refuses_the_whole_call(value, error, message):
    visualdl.init(project="p", name="r")
    with pytest.raises(error, match=message):
        visualdl.log({"a": 1.0, "s": value()})
    visualdl.log({"b": 2.0})
    visualdl.finish()
    assert read().tags("r")["scalar"] == ["b"]


@pytest.mark.parametrize("fps, error", [(0, ValueError), ("4", TypeError)])
def test_bad_video_fps(fps, error):
    with pytest.raises(error, match="'Video fps': fps must"):
        visualdl.Video(np.zeros((2, 3, 4, 4), np.uint8), fps=fps)


def test_figures_logged_and_as_images():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    go = pytest.importorskip("plotly.graph_objects")
    fig, ax = plt.subplots(figsize=(2, 1), dpi=50)
    ax.plot([0, 1], [1, 0])
    visualdl.init(project="p", name="r")
    visualdl.log({"mpl": fig, "plotly": go.Figure(go.Scatter(y=[3, 1, 2])),
                  "as_image": visualdl.Image(fig), "current": visualdl.Image(plt)})
    visualdl.finish()
    plt.close(fig)
    got = read()
    assert got.tags("r")["figure"] == ["mpl", "plotly"]
    assert _pixels(got, "as_image").shape == (50, 100, 4)
    assert _pixels(got, "current").shape == (50, 100, 4)
    (ref,) = got.figures("r", "plotly")
    assert '"y":[3,1,2]' in got.load(ref).plotly_json.replace(" ", "")
