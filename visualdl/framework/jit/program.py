"""The static program that tracing records: an ordered list of op calls over named values.

It is the framework's own intermediate form between eager execution and ONNX: op names and
attributes exactly as ``dispatch.apply`` saw them, parameters and buffers as named
initializers (their dotted names), and for every value its traced shape and whether its
axis 0 is the batch axis (so the exporter can leave that axis free).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class ValueInfo:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    batched: bool = False  # axis 0 is the (free) batch axis


@dataclass
class Node:
    op: str                      # the framework op name (``conv2d``, ``relu``, ...)
    inputs: list[str | None]     # value names; None for an absent optional input
    output: str
    attrs: dict[str, Any]
    scope: tuple[str, ...]       # the layer path that ran it: ("encoder", "block1", "conv")
    name: str = ""               # node name with the layer hierarchy: "encoder/block1/conv"


@dataclass
class Program:
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    nodes: list[Node]
    initializers: dict[str, np.ndarray]     # parameters/buffers by dotted name, and constants
    values: dict[str, ValueInfo] = field(default_factory=dict)  # every named value
    batch_size: int | None = None           # the traced batch size

    def info(self, name: str) -> ValueInfo:
        return self.values[name]

    def __str__(self) -> str:
        lines = ["program(" + ", ".join(f"{v.name}: {list(v.shape)}" for v in self.inputs) + ")"]
        for n in self.nodes:
            args = ", ".join("None" if i is None else i for i in n.inputs)
            lines.append(f"  {n.output} = {n.op}({args})  # {n.name}")
        lines.append("  return " + ", ".join(v.name for v in self.outputs))
        return "\n".join(lines)
