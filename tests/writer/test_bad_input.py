"""Every documented bad input raises TypeError/ValueError naming the tag and the problem,
and never loses what was recorded before it."""

import numpy as np
import pytest

from visualdl import LogReader, LogWriter

IMG = np.zeros((4, 4, 3), np.uint8)

BAD_CALLS = [
    ("add_scalar", ("", 1.0, 0), ValueError, "tag must not be empty"),
    ("add_scalar", (3, 1.0, 0), TypeError, "tag must be a str"),
    ("add_scalar", ("bad\udc80", 1.0, 0), ValueError, "not valid Unicode"),
    ("add_text", ("t", "bad\udc80", 0), ValueError, "'t': text_string is not valid Unicode"),
    ("add_scalar", ("loss", "high", 0), TypeError, "'loss': value must be a real number"),
    ("add_scalar", ("loss", np.array([1.0, 2.0]), 0), ValueError, "'loss': value must hold"),
    ("add_scalar", ("loss", 1.0, 1.5), TypeError, "'loss': step must be an integer"),
    ("add_scalar", ("loss", 1.0, "3"), TypeError, "'loss': step must be an integer"),
    ("add_scalar", ("loss", 1.0, 2**70), ValueError, "does not fit in int64"),
    ("add_scalar", ("loss", 1.0, 0, "now"), TypeError, "'loss': walltime"),
    ("add_scalars", ("m", [1, 2], 0), TypeError, "tag_scalar_dict must be a dict"),
    ("add_image", ("img", np.zeros((4, 4, 2), np.uint8), 0), ValueError, "1, 3 or 4 channels"),
    ("add_image", ("img", np.zeros((4, 4), np.uint8), 0), ValueError, "must have 3 dimensions"),
    ("add_image", ("img", IMG, 0, None, "XYZ"), ValueError, "dataformats must be one of"),
    ("add_image", ("img", np.full((2, 2, 3), np.nan), 0), ValueError, "'img': image contains NaN"),
    ("add_image", ("img", np.full((2, 2, 3), 2.0), 0), ValueError, "must lie in \\[0, 1\\]"),
    ("add_image", ("img", np.full((2, 2, 3), 300), 0), ValueError, "must lie in \\[0, 255\\]"),
    ("add_image", ("img", np.zeros((0, 2, 3)), 0), ValueError, "image is empty"),
    ("add_image", ("img", "not an image", 0), TypeError, "'img': image must be numeric"),
    ("add_text", ("t", 42, 0), TypeError, "'t': text_string must be a str"),
    ("add_audio", ("a", np.zeros(10), 0, 0), ValueError, "sample_rate must be in"),
    ("add_audio", ("a", np.zeros(10), 0, 8000.5), TypeError, "sample_rate must be an integer"),
    ("add_audio", ("a", np.full(10, 2.0), 0), ValueError, "must lie in \\[-1, 1\\]"),
    ("add_audio", ("a", np.zeros(10, np.int32), 0), TypeError, "float in \\[-1, 1\\] or int16"),
    ("add_audio", ("a", np.zeros((2, 2, 2)), 0), ValueError, r"\(frames,\) or \(frames, channels\)"),
    ("add_audio", ("a", np.zeros(0), 0), ValueError, "audio has no frames"),
    ("add_histogram", ("h", [], 0), ValueError, "'h': values must not be empty"),
    ("add_histogram", ("h", [1.0], 0, None, 0), ValueError, "buckets must be in"),
    ("add_histogram", ("h", ["a", "b"], 0), TypeError, "'h': values must be numeric"),
    ("add_pr_curve", ("pr", [0, 1], [0.5], 0), ValueError, "same length, got 2 and 1"),
    ("add_pr_curve", ("pr", [0, 2], [0.5, 0.5], 0), ValueError, "labels must be 0 or 1"),
    ("add_pr_curve", ("pr", [0, 1], [0.5, 1.5], 0), ValueError, "probabilities in \\[0, 1\\]"),
    ("add_pr_curve", ("pr", [0, 1], [0.5, 0.5], 0, 1), ValueError, "num_thresholds must be"),
    ("add_roc_curve", ("roc", [0, 1], [0.1, 0.2], 0, 10, [1]), ValueError, "weights must have"),
    ("add_embeddings", ("e", np.zeros(3)), ValueError, "'e': mat must be a non-empty 2-D"),
    ("add_embeddings", ("e", np.zeros((2, 2)), ["a"]), ValueError, "metadata has 1 rows"),
    ("add_embeddings", ("e", np.full((2, 2), np.inf)), ValueError, "'e': mat contains NaN"),
    ("add_hparams", ({}, []), TypeError, "hparams_dict must be a non-empty dict"),
    ("add_hparams", ({"lr": [1, 2]}, []), TypeError, "hparams_dict\\['lr'\\]"),
    ("add_hparams", ({"lr": 0.1}, "loss"), TypeError, "metrics_list must be a list"),
    ("add_figure", ("f", object(), 0), TypeError, "'f': figure must be a plotly Figure"),
    ("add_figure", ("f", "{not json", 0), ValueError, "must be plotly JSON"),
    ("add_graph", ("/no/such/model.onnx",), ValueError, "does not exist"),
    ("add_graph", (object(),), TypeError, "onnx.ModelProto"),
]


@pytest.mark.parametrize("method,args,exc,match", BAD_CALLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CALLS)])
def test_bad_input_raises_and_keeps_earlier_data(tmp_path, method, args, exc, match):
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_scalar("kept", 1.0, 0)
        with pytest.raises(exc, match=match):
            getattr(w, method)(*args)
        w.add_scalar("kept", 2.0, 1)
    r = LogReader(str(tmp_path))
    assert r.scalars(r.runs()[0], "kept").values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("kwargs,match", [
    ({"max_queue": 0}, "max_queue"),
    ({"flush_secs": -1}, "flush_secs"),
    ({"file_name": "other.log"}, "file_name"),
    ({"file_name": "a/vdlrecords.log"}, "file_name"),
])
def test_bad_constructor_arguments(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LogWriter(logdir=str(tmp_path), **kwargs)


def test_logdir_that_is_a_file(tmp_path):
    path = tmp_path / "f"
    path.write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        LogWriter(logdir=str(path))


def test_reader_unknown_run_and_tag(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("x", 1.0, 0)
    r = LogReader(str(tmp_path))
    with pytest.raises(KeyError, match="no run named 'nope'"):
        r.scalars("nope", "x")
    with pytest.raises(KeyError, match="no scalar tag 'y'"):
        r.scalars("run", "y")
    with pytest.raises(KeyError, match="no image tag 'x'"):
        r.images("run", "x")
