"""Audio: the index of every recorded step, and the WAV of one step."""

from __future__ import annotations

import re

from flask import Blueprint, Response, request

from visualdl.api import blobs

__all__ = ["blueprint"]

KIND = "audio"
blueprint = Blueprint("audio", __name__)


def _durations(found: list) -> dict:
    return {"durations": [
        r.meta["frames"] / r.meta["sample_rate"] if r.meta.get("sample_rate") else 0.0
        for r in found
    ]}


@blueprint.get("/api/audio")
def index() -> Response:
    """``?run=&tag=``: every step with sample rate, channels, frames and duration."""
    return blobs.index_response(KIND, ("sample_rate", "channels", "frames"), _durations)


@blueprint.get("/api/audio/data")
def data() -> Response:
    """``?run=&tag=&step=[&download=1]``: the WAV, read from the record file by offset."""
    run, tag, step, ref = blobs.requested_ref(KIND)
    name = None
    if request.args.get("download"):
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{run}_{tag}_{step}").strip("._") + ".wav"
    return blobs.bytes_response(ref, blobs.load(ref).wav, "audio/wav", name)
