"""``Layer``: the base class of every model part (parameters, buffers, sub-layers by name)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator

import numpy as np

from .. import device as _device
from .. import dtypes
from .. import hooks as _hooks
from ..ops.shape import copy_between
from ..tensor import Tensor
from .parameter import Parameter


class Layer:
    """Base class: assign ``Parameter``s and ``Layer``s as attributes and they are registered
    under their attribute names; ``named_parameters()`` yields dotted paths
    (``"encoder.0.weight"``) that stay stable for checkpoints and histogram tags.

    Subclasses implement ``forward``; calling the layer runs it.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_sub_layers", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError("call Layer.__init__() before assigning attributes")
        params, buffers, subs = d["_parameters"], d["_buffers"], d["_sub_layers"]
        if isinstance(value, (Parameter, Layer)):
            for other in (params, buffers, subs):
                other.pop(name, None)
            d.pop(name, None)
            (params if isinstance(value, Parameter) else subs)[name] = value
        elif name in params or name in subs:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to {name!r}, which holds a "
                                f"{'Parameter' if name in params else 'Layer'}")
            (params if name in params else subs)[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"buffer {name!r} must be a Tensor or None")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_sub_layers"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._buffers, self._sub_layers):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Tensor | None, persistable: bool = True) -> None:
        """State that is saved (unless ``persistable=False``) but not trained, e.g. running
        statistics."""
        self._buffers[name] = tensor
        if not persistable:
            self._non_persistent.add(name)

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        self._parameters[name] = parameter
        return parameter

    register_parameter = add_parameter

    def add_sublayer(self, name: str, layer: Layer) -> Layer:
        self._sub_layers[str(name)] = layer
        return layer

    # ------------------------------------------------------------ running
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = _hooks.layer_scope
        if scope is not None:  # a profiler records: it notes which layer runs
            return scope.call(self, args, kwargs)
        d = self.__dict__
        if d.get(_hooks.PRE) or d.get(_hooks.POST):
            return _hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        """``hook(layer, args)`` runs before ``forward``; a non-None result replaces the
        arguments. Returns a handle whose ``remove()`` unregisters it."""
        return _hooks.add_layer_hook(self, _hooks.PRE, hook)

    def register_forward_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        """``hook(layer, args, output)`` runs after ``forward``; a non-None result replaces
        the output. Returns a handle whose ``remove()`` unregisters it."""
        return _hooks.add_layer_hook(self, _hooks.POST, hook)

    register_forward_post_hook = register_forward_hook  # PaddlePaddle's name

    def to_onnx(self, input_spec: Any = None) -> Any:
        """An ``onnx.ModelProto`` of this layer, traced on ``input_spec``: example inputs
        (tensors, arrays, or ``vf.jit.InputSpec`` shapes), one per ``forward`` argument."""
        if input_spec is None:
            raise ValueError(f"{type(self).__name__}.to_onnx needs input_spec: the graph is "
                             "traced by running forward on example inputs (tensors, arrays or "
                             "vf.jit.InputSpec)")
        from ..onnx import to_onnx

        return to_onnx(self, input_spec)

    def train(self, mode: bool = True) -> Layer:
        for layer in self.sublayers(include_self=True):
            object.__setattr__(layer, "training", bool(mode))
        return self

    def eval(self) -> Layer:
        return self.train(False)

    # ------------------------------------------------------------ traversal
    def named_children(self) -> Iterator[tuple[str, Layer]]:
        yield from self._sub_layers.items()

    def children(self) -> Iterator[Layer]:
        for _, layer in self.named_children():
            yield layer

    def named_sublayers(self, prefix: str = "", include_self: bool = False) -> Iterator[tuple[str, Layer]]:
        """Every layer below this one (depth first) with its dotted name."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        first = True
        while stack:
            name, layer = stack.pop()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            if include_self or not first:
                yield name, layer
            first = False
            children = [(f"{name}.{n}" if name else n, c) for n, c in layer._sub_layers.items()
                        if c is not None]
            stack.extend(reversed(children))

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def _named_members(self, attr: str, prefix: str) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        for lname, layer in self.named_sublayers(prefix=prefix, include_self=True):
            for name, t in getattr(layer, attr).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{lname}.{name}" if lname else name), t

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members("_parameters", prefix)  # type: ignore[misc]

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix)

    def buffers(self) -> list[Tensor]:
        return [b for _, b in self.named_buffers()]

    def apply(self, fn: Callable[[Layer], None]) -> Layer:
        for layer in self.sublayers(include_self=True):
            fn(layer)
        return self

    # ------------------------------------------------------------ state
    def state_dict(self) -> OrderedDict[str, Tensor]:
        """Parameters and persistable buffers by dotted name (the tensors themselves)."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for lname, layer in self.named_sublayers(include_self=True):
            for name, t in layer._parameters.items():
                if t is not None:
                    out[f"{lname}.{name}" if lname else name] = t
            for name, t in layer._buffers.items():
                if t is not None and name not in layer._non_persistent:
                    out[f"{lname}.{name}" if lname else name] = t
        return out

    def load_state_dict(self, state: dict[str, Any], strict: bool = True) -> tuple[list[str], list[str]]:
        """Copy values (tensors or arrays) into this layer's tensors in place. Returns
        (missing, unexpected) names; with ``strict`` either raises. Every shape is checked
        before anything is copied: a state of another model changes nothing, and the error
        names each entry that differs."""
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
        hosts = {name: (state[name].numpy() if isinstance(state[name], Tensor)
                        else np.asarray(state[name])) for name in own if name in state}
        wrong = [f"{name}: shape {tuple(host.shape)} does not match {own[name].shape}"
                 for name, host in hosts.items() if tuple(host.shape) != own[name].shape]
        if wrong:
            raise ValueError(f"{len(wrong)} of {len(hosts)} entries have another shape (nothing "
                             f"was loaded): {'; '.join(wrong[:10])}")
        for name, host in hosts.items():
            own[name].set_value(host)
        return missing, unexpected

    set_state_dict = load_state_dict

    def to(self, device: Any = None, dtype: Any = None) -> Layer:
        """Move/cast every parameter and buffer in place (the Parameter objects are kept)."""
        dev = _device.normalize(device) if device is not None else None
        for t in list(self.parameters()) + list(self.buffers()):
            target_dev = dev or t.device
            dt = dtypes.as_dtype(dtype) if dtype is not None and dtypes.is_float(t.dtype) else t.dtype
            if target_dev == t.device and dt == t.dtype:
                continue
            if dt == t.dtype:  # a move: recorded as a memcpy while vf.profiler records
                t._data = copy_between(t._data, t.device, target_dev)
            else:
                host = np.asarray(t.numpy(), dtype=dt)
                t._data = _device.backend(target_dev).asarray(np.array(host, copy=True))
            t._device = target_dev
            t._grad = None
        return self

    def cpu(self) -> Layer:
        return self.to("cpu")

    def cuda(self) -> Layer:
        return self.to("cuda")

    def clear_gradients(self) -> None:
        for p in self.parameters():
            p._grad = None

    zero_grad = clear_gradients

    # ------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        if self._sub_layers:
            for name, layer in self._sub_layers.items():
                body = repr(layer).replace("\n", "\n  ")
                lines.append(f"  ({name}): {body}")
            return "\n".join(lines) + "\n)"
        return lines[0] + ")"
