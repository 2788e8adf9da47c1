"""A torch module's graph as ONNX bytes, for ``LogWriter.add_graph``: traced with torch's
TorchScript exporter on example inputs, as TensorBoard's ``add_graph`` traces with
``torch.jit.trace``. torch is imported here only, when a graph is asked for."""

from __future__ import annotations

import io
import warnings
from typing import Any

__all__ = ["onnx_bytes"]


def onnx_bytes(model: Any, example: Any) -> bytes:
    """``model`` exported to ONNX, called on ``example`` (a tensor, or a tuple of the
    positional arguments of its ``forward``). ``ValueError`` when there is no example,
    ``ImportError`` naming the package the exporter needs when one is missing."""
    import torch

    if example is None:
        raise ValueError("a graph needs an example input: a tensor or a tuple of tensors "
                         "(the positional arguments of the model's forward)")
    args = tuple(example) if isinstance(example, (list, tuple)) else (example,)
    buffer = io.BytesIO()
    was_training = model.training
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's deprecation notes
            torch.onnx.export(model, args, buffer, dynamo=False)
    except ModuleNotFoundError as exc:
        raise ImportError(f"exporting a torch module to ONNX needs the {exc.name!r} "
                          f"package (pip install {exc.name})") from exc
    finally:
        model.train(was_training)  # the exporter may leave it in eval mode
    return buffer.getvalue()
