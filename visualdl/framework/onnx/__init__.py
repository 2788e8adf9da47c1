"""``vf.onnx.export``: write a traced program as an ONNX model (the ``onnx`` package is
imported only when exporting, so ``import visualdl.framework`` stays light)."""

from .program_to_onnx import UnsupportedExportError, export, to_onnx

__all__ = ["UnsupportedExportError", "export", "to_onnx"]
