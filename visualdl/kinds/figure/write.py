"""Figures, writer side: plotly figures kept as JSON (interactive), matplotlib as PNG.

The figure is serialized in the caller's thread, because figures are mutable and
matplotlib is not thread-safe: a later change must not leak in.
"""

from __future__ import annotations

import io
import json
from typing import Any

from visualdl.kinds.checks import check_size, check_text_size, check_utf8


def check(tag: str, figure: Any) -> tuple[tuple[str, Any], int]:
    """``(("plotly", json) or ("png", bytes))`` and its size."""
    payload = _payload(tag, figure)
    if payload[0] == "plotly":
        check_utf8(tag, "the figure's JSON", payload[1])
        check_text_size(tag, "the figure's JSON", payload[1])
    else:
        check_size(tag, "the figure's PNG", len(payload[1]))
    return payload, len(payload[1])


def _payload(tag: str, figure: Any) -> tuple[str, Any]:
    if isinstance(figure, dict):
        return "plotly", json.dumps(figure, default=_json_default)
    if isinstance(figure, str):
        try:
            json.loads(figure)
        except ValueError:
            raise ValueError(f"{tag!r}: a figure given as str must be plotly JSON") from None
        return "plotly", figure
    if hasattr(figure, "to_plotly_json") and hasattr(figure, "to_json"):
        return "plotly", figure.to_json()
    if hasattr(figure, "savefig") and hasattr(figure, "canvas"):
        out = io.BytesIO()
        figure.savefig(out, format="png")
        return "png", out.getvalue()
    raise TypeError(
        f"{tag!r}: figure must be a plotly Figure, a matplotlib Figure or a plotly JSON "
        f"dict/str, got {type(figure).__name__}"
    )


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot turn {type(value).__name__} into JSON")


def encode(msg: Any, payload: tuple[str, Any]) -> None:
    fmt, content = payload
    if fmt == "plotly":
        msg.plotly_json = content
    else:
        msg.png = content
