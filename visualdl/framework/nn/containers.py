"""Containers: ``Sequential`` (runs children in order) and ``LayerList`` (holds them)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator

from .layer import Layer


class _Container(Layer):
    """Children by position: ``c[i]``, ``len(c)``, ``iter(c)``."""

    def __getitem__(self, i: int) -> Layer:
        return list(self._sub_layers.values())[i]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())


class Sequential(_Container):
    """``Sequential(l1, l2, ...)`` names children "0", "1", ...; ``Sequential(("a", l1), ...)``
    or ``Sequential(OrderedDict(...))`` keeps the given names."""

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (dict, OrderedDict)):
            items = list(layers[0].items())
        elif layers and all(isinstance(item, tuple) and len(item) == 2 for item in layers):
            items = list(layers)
        else:
            items = [(str(i), layer) for i, layer in enumerate(layers)]
        for name, layer in items:
            if not isinstance(layer, Layer):
                raise TypeError(f"Sequential item {name!r} is not a Layer: {type(layer).__name__}")
            self.add_sublayer(name, layer)

    def forward(self, x: Any) -> Any:
        for layer in self._sub_layers.values():
            x = layer(x)
        return x


class LayerList(_Container):
    def __init__(self, layers: Iterable[Layer] | None = None) -> None:
        super().__init__()
        for layer in layers or ():
            self.append(layer)

    def append(self, layer: Layer) -> LayerList:
        self.add_sublayer(str(len(self._sub_layers)), layer)
        return self
