"""Videos: checked and copied in the caller's thread; laid out and encoded in the writer's.

Encoding is done once, when the entry is written, to H.264 in MP4 (through PyAV, whose
wheel ships its codecs: ``pip install "visualdl[video]"``), which every browser plays; a
video is then served as it is stored. Without PyAV the frames become an animated GIF
(Pillow), said once with a warning.
"""

from __future__ import annotations

import io
import os
import tempfile
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

from visualdl.kinds.checks import (
    check_pixel_range, check_size, pixels_uint8, require_real, to_array)

FORMATS = ("THWC", "TCHW", "THW", "NTCHW", "NTHWC")
_CHANNELS = (1, 3, 4)
_MAX_FPS = 1000.0
_warned = False


def _as_array(tag: str, frames: Any) -> np.ndarray:
    """A private copy; a list of frames of different sizes is refused by name."""
    if isinstance(frames, (list, tuple)) and frames:
        shapes = [np.shape(f) for f in frames]
        for i, shape in enumerate(shapes):
            if shape != shapes[0]:
                raise ValueError(
                    f"{tag!r}: frames of different sizes: frame 0 has shape {shapes[0]}, "
                    f"frame {i} has shape {shape}")
    return to_array(tag, frames, "video")


def check_video(tag: str, frames: Any, dataformats: str) -> tuple[np.ndarray, str]:
    """Copy and check frames; returns the copy and its normalized format."""
    if not isinstance(dataformats, str) or dataformats.upper() not in FORMATS:
        raise ValueError(
            f"{tag!r}: dataformats must be one of {', '.join(FORMATS)}, got {dataformats!r}")
    fmt = dataformats.upper()
    array = _as_array(tag, frames)
    require_real(tag, array, "video")
    if array.ndim != len(fmt):
        raise ValueError(
            f"{tag!r}: a video with dataformats={fmt} must have {len(fmt)} dimensions, "
            f"got shape {array.shape}")
    if "C" in fmt and array.shape[fmt.index("C")] not in _CHANNELS:
        raise ValueError(
            f"{tag!r}: video frames must have 1, 3 or 4 channels, got shape {array.shape} "
            f"for dataformats={fmt}")
    if array.size == 0:
        raise ValueError(f"{tag!r}: video is empty, shape {array.shape}")
    check_pixel_range(tag, array, "video")
    t, h, w = _dims(array.shape, fmt)
    check_size(tag, "the video (as uint8 frames)", t * h * w * 3)
    return array, fmt


def check_fps(tag: str, fps: Any) -> float:
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)):
        raise TypeError(f"{tag!r}: fps must be a number, got {fps!r}")
    if not 0 < float(fps) <= _MAX_FPS:
        raise ValueError(f"{tag!r}: fps must be in (0, {_MAX_FPS:g}], got {fps}")
    return float(fps)


def _dims(shape: tuple[int, ...], fmt: str) -> tuple[int, int, int]:
    """Frames, height and width of the laid-out video (a batch as its grid)."""
    sizes = dict(zip(fmt, shape))
    rows, cols = grid_shape(sizes.get("N", 1))
    return sizes["T"], rows * sizes["H"], cols * sizes["W"]


def grid_shape(n: int) -> tuple[int, int]:
    """torch's layout of ``n`` videos: padded to a power of two, rows a power of two."""
    if n <= 1:
        return 1, 1
    padded = n if n & (n - 1) == 0 else 2 ** n.bit_length()
    rows = 2 ** ((n.bit_length() - 1) // 2)
    return rows, padded // rows


def to_thwc_uint8(array: np.ndarray, fmt: str) -> np.ndarray:
    """T x H x W x 3 uint8 frames; a batch (N...) becomes torch's grid of videos."""
    if fmt == "THW":
        array = array[..., None]
    elif fmt == "TCHW":
        array = array.transpose(0, 2, 3, 1)
    elif fmt in ("NTCHW", "NTHWC"):
        if fmt == "NTCHW":
            array = array.transpose(0, 1, 3, 4, 2)
        array = _grid(array)
    array = pixels_uint8(array)
    channels = array.shape[3]
    if channels == 1:
        array = np.repeat(array, 3, axis=3)
    elif channels == 4:
        array = array[..., :3]
    return np.ascontiguousarray(array)


def _grid(batch: np.ndarray) -> np.ndarray:
    """N x T x H x W x C videos as one T x (rows*H) x (cols*W) x C video, as torch lays
    them out (missing cells black)."""
    n, t, h, w, c = batch.shape
    rows, cols = grid_shape(n)
    if rows * cols > n:
        batch = np.concatenate([batch, np.zeros((rows * cols - n, t, h, w, c), batch.dtype)])
    grid = batch.reshape(rows, cols, t, h, w, c).transpose(2, 0, 3, 1, 4, 5)
    return grid.reshape(t, rows * h, cols * w, c)


def encode_video(frames: np.ndarray, fps: float) -> tuple[bytes, str]:
    """T x H x W x 3 uint8 frames as (file bytes, MIME type): MP4 (H.264) with PyAV, an
    animated GIF without it."""
    try:
        import av  # noqa: F401 - an optional dependency: visualdl[video]
    except ImportError:
        _warn_once()
        return encode_gif(frames, fps), "image/gif"
    return encode_mp4(frames, fps), "video/mp4"


def _warn_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("visualdl: PyAV is not installed, so videos are stored as animated GIFs "
                      "(pip install \"visualdl[video]\" for MP4)", RuntimeWarning, stacklevel=3)


def encode_mp4(frames: np.ndarray, fps: float) -> bytes:
    """H.264 (yuv420p, which every browser decodes) in an MP4 whose index comes first, so a
    browser starts playing before the whole file arrives. H.264 needs even dimensions: an
    odd height or width gets a black row or column."""
    import av

    _, h, w, _ = frames.shape
    if h % 2 or w % 2:
        frames = np.pad(frames, ((0, 0), (0, h % 2), (0, w % 2), (0, 0)))
    # faststart moves the index to the front in a second pass over a named file
    with tempfile.TemporaryDirectory(prefix="visualdl-video-") as folder:
        path = os.path.join(folder, "video.mp4")
        _write_mp4(av, path, frames, fps)
        with open(path, "rb") as f:
            return f.read()


def _write_mp4(av: Any, path: str, frames: np.ndarray, fps: float) -> None:
    with av.open(path, mode="w", format="mp4", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1000))
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        # crf 18: visually lossless; zerolatency: no frame held back (no B-frames)
        stream.options = {"crf": "18", "preset": "veryfast", "tune": "zerolatency"}
        for pixels in frames:
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def encode_gif(frames: np.ndarray, fps: float) -> bytes:
    """An animated GIF that loops (Pillow); its frame time is rounded to 10 ms."""
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:],
                   duration=max(10, round(1000.0 / fps, -1)), loop=0)
    return out.getvalue()


def check(tag: str, frames: Any, fps: Any = 4, dataformats: str = "THWC"
          ) -> tuple[tuple[np.ndarray, str, float], int]:
    """The payload ``encode`` takes, and its size in bytes."""
    rate = check_fps(tag, fps)
    array, fmt = check_video(tag, frames, dataformats)
    return (array, fmt, rate), array.nbytes


def encode(msg: Any, payload: tuple[np.ndarray, str, float]) -> None:
    array, fmt, fps = payload
    frames = to_thwc_uint8(array, fmt)
    msg.data, msg.mime = encode_video(frames, fps)
    msg.frames, msg.height, msg.width = frames.shape[:3]
    msg.fps = fps


def decode_frames(data: bytes) -> np.ndarray:
    """A stored video's frames as T x H x W x 3 uint8 (for readers and tests); needs PyAV
    for MP4."""
    if data[:6] in (b"GIF87a", b"GIF89a"):
        from PIL import Image, ImageSequence

        with Image.open(io.BytesIO(data)) as im:
            return np.stack([np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)])
    import av

    with av.open(io.BytesIO(data)) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


