"""Blobs (images, audio, figures) served by (run, tag, step) straight from the record file.

The reader keeps only an index of file offsets; the bytes are read on demand, so the
server's memory does not grow with the number of images. Responses carry an ETag made
from the blob's place in its file, so the browser can cache and revalidate them cheaply.
"""

from __future__ import annotations

from typing import Any

from flask import Response

from visualdl.sources.values import BlobRef
from visualdl.api.common import (
    arg_int, arg_str, etag_for, not_modified, provider, read_tag, run_tag_json,
)
from visualdl.api.errors import ApiError

__all__ = ["refs", "ref_for_step", "load", "bytes_response", "index_json", "index_response",
           "requested_ref"]

_STEP_MAX = 2**63 - 1


def refs(kind: str, run: str, tag: str) -> list[BlobRef]:
    """Every blob of one tag in time order; 404 for an unknown run or tag."""
    return read_tag(run, kind, tag, lambda r, t: provider().blobs(r, kind, t))


def ref_for_step(kind: str, run: str, tag: str, step: int) -> BlobRef:
    """The blob logged at ``step`` (the newest one when a resumed run logged it twice)."""
    ref = read_tag(run, kind, tag, lambda r, t: provider().blob_at(r, kind, t, step))
    if ref is None:
        raise ApiError(404, f"no {kind} at step {step}")
    return ref


def load(ref: BlobRef) -> Any:
    """The blob's protobuf message; a file that changed under us is a 404, not a crash."""
    try:
        return provider().load_blob(ref)
    except (OSError, ValueError) as err:
        raise ApiError(404, f"{ref.kind} at step {ref.step} can no longer be read: {err}") from None


def blob_etag(ref: BlobRef) -> str:
    return etag_for("blob", ref.path, ref.offset, ref.kind, ref.tag, ref.step)


def bytes_response(ref: BlobRef, data: bytes, mimetype: str,
                   download_name: str | None = None) -> Response:
    etag = blob_etag(ref)
    cached = not_modified(etag)
    if cached is not None:
        return cached
    response = Response(data, mimetype=mimetype)
    response.set_etag(etag, weak=True)
    # Blobs never change once written; revalidate after an hour in case a resumed run
    # logged the same step again.
    response.headers["Cache-Control"] = "private, max-age=3600"
    if download_name:
        response.headers["Content-Disposition"] = f'attachment; filename="{download_name}"'
    return response


def index_json(run: str, tag: str, found: list[BlobRef], meta_keys: tuple[str, ...]) -> dict:
    """All steps of one blob tag with their wall times, sizes and small fields."""
    return {
        "run": run,
        "tag": tag,
        "total": len(found),
        "steps": [r.step for r in found],
        "wall_times": [r.wall_time for r in found],
        "sizes": [r.size for r in found],
        **{key: [r.meta.get(key) for r in found] for key in meta_keys},
    }


def index_response(kind: str, meta_keys: tuple[str, ...], extra: Any = None) -> Response:
    """The ``?run=&tag=`` index route of a blob kind; ``extra(found)`` adds fields."""
    def build(run: str, tag: str) -> dict:
        found = refs(kind, run, tag)
        body = index_json(run, tag, found, meta_keys)
        if extra is not None:
            body.update(extra(found))
        return body

    return run_tag_json(f"{kind} index", build)


def requested_ref(kind: str) -> tuple[str, str, int, BlobRef]:
    """The blob a ``?run=&tag=&step=`` request names."""
    run, tag = arg_str("run"), arg_str("tag")
    arg_str("step")  # required: a 400 when missing
    step = arg_int("step", 0, -_STEP_MAX - 1, _STEP_MAX)
    return run, tag, step, ref_for_step(kind, run, tag, step)
