"""Audio: checked in the caller's thread, WAV-encoded (16-bit PCM) in the writer's."""

from __future__ import annotations

import io
import wave
from typing import Any

import numpy as np

from visualdl.kinds.checks import check_size, require_real, to_array

MAX_CHANNELS = 16


def check_audio(tag: str, audio: Any, sample_rate: Any) -> np.ndarray:
    """Copy and check samples: shape (frames,) or (frames, channels); float or int16."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer)):
        raise TypeError(f"{tag!r}: sample_rate must be an integer, got {sample_rate!r}")
    if not 0 < int(sample_rate) <= 1_000_000:
        raise ValueError(f"{tag!r}: sample_rate must be in 1..1000000, got {sample_rate}")
    array = to_array(tag, audio, "audio")
    require_real(tag, array, "audio")
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or not 1 <= array.shape[1] <= MAX_CHANNELS:
        raise ValueError(
            f"{tag!r}: audio must have shape (frames,) or (frames, channels) with at most "
            f"{MAX_CHANNELS} channels, got {np.shape(audio)}"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{tag!r}: audio has no frames")
    if array.dtype.kind == "f":
        if not np.isfinite(array).all():
            raise ValueError(f"{tag!r}: audio contains NaN or infinite values")
        peak = np.abs(array).max()
        if peak > 1 + 1e-6:
            raise ValueError(f"{tag!r}: float audio must lie in [-1, 1], peak is {peak:g}")
    elif array.dtype != np.int16:
        raise TypeError(f"{tag!r}: audio must be float in [-1, 1] or int16, got {array.dtype}")
    check_size(tag, "the audio (as 16-bit WAV)", array.size * 2 + 44)
    return array


def to_int16(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.int16:
        return array
    return np.rint(np.clip(array, -1.0, 1.0) * 32767.0).astype(np.int16)


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """Frames x channels int16 samples as a WAV file's bytes."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(samples.shape[1])
        wav.setsampwidth(2)
        wav.setframerate(int(sample_rate))
        wav.writeframes(np.ascontiguousarray(samples, dtype="<i2").tobytes())
    return out.getvalue()


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    """WAV bytes to (frames x channels int16 samples, sample rate)."""
    with wave.open(io.BytesIO(data), "rb") as wav:
        channels, rate = wav.getnchannels(), wav.getframerate()
        raw = wav.readframes(wav.getnframes())
    return np.frombuffer(raw, dtype="<i2").reshape(-1, channels), rate


def check(tag: str, audio: Any, sample_rate: Any) -> tuple[tuple[np.ndarray, int], int]:
    """The payload ``encode`` takes, and its size in bytes."""
    samples = check_audio(tag, audio, sample_rate)
    return (samples, int(sample_rate)), samples.nbytes


def encode(msg: Any, payload: tuple[np.ndarray, int]) -> None:
    samples, rate = payload
    pcm = to_int16(samples)
    msg.wav = encode_wav(pcm, rate)
    msg.sample_rate, msg.frames, msg.channels = rate, pcm.shape[0], pcm.shape[1]
