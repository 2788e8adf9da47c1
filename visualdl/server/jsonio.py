"""JSON encoding for API responses.

JSON has no NaN or infinity, and a chart must still be able to show them, so non-finite
floats travel as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``: exactly what
JavaScript's ``Number()`` turns back into the right value. Encoding is done here, once,
with ``allow_nan=False`` so an unconverted NaN fails loudly instead of emitting invalid JSON.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from flask import Response

__all__ = ["json_response", "dumps", "float_list", "NONFINITE_NAMES"]

NONFINITE_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def float_list(values: np.ndarray) -> list:
    """Convert a float array to a JSON-safe list (non-finite values become strings)."""
    out = values.tolist()
    bad = np.flatnonzero(~np.isfinite(values))
    for i in bad.tolist():
        v = out[i]
        out[i] = "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    return out


def dumps(obj: Any) -> str:
    """Compact JSON; raises ValueError on a stray NaN rather than writing invalid JSON."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def json_response(obj: Any, status: int = 200) -> Response:
    """A JSON response with the right content type and no caching surprises."""
    return Response(dumps(obj), status=status, mimetype="application/json")
