"""A Keras model's config (the ``graph_keras_model`` summary Keras' TensorBoard callback
writes) as an ONNX layer graph: TensorBoard's "conceptual graph".

A layer becomes a node named after it (op: its class), its scalar settings become
attributes, and its ``inbound_nodes`` become edges. Both config dialects are read: Keras 2
(tf.keras, tf_keras) lists ``[layer, node_index, tensor_index, kwargs]``, Keras 3 nests
``keras_history`` inside each call's ``args``. A model used as a layer is drawn as a group
of its own layers; a ``Sequential`` model chains its layers in order.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

#: The ONNX domain of the layer nodes (not an ONNX operator set).
DOMAIN = "keras.layer"
_MODELS = {"Functional", "Model", "Sequential"}
_MAX_DEPTH = 64  # nested models


def to_onnx(config: bytes | str) -> bytes:
    """The serialized ONNX ``ModelProto`` of a Keras model config (JSON); ValueError when
    it is not one."""
    from onnx import TensorProto, helper

    try:
        model = json.loads(config)
    except RecursionError:
        raise ValueError("the Keras model config is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"the Keras model config is not JSON: {exc}") from None
    if not isinstance(model, dict) or not isinstance(model.get("config"), (dict, list)):
        raise ValueError("the Keras model config has no 'config' object")
    graph = _Graph()
    try:
        outputs = graph.model(model, "", [], 0)
    except RecursionError:
        raise ValueError("the Keras model config is nested too deeply") from None
    except (TypeError, AttributeError) as exc:  # a config no Keras wrote
        raise ValueError(f"the Keras model config is malformed: {exc}") from None
    known = {name for name, *_ in graph.nodes}
    nodes = []
    for name, op, inputs, attrs in graph.nodes:
        node = helper.make_node(op, [i for i in inputs if i in known], [name], name=name,
                                domain=DOMAIN)
        node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs)
        nodes.append(node)
    # a config holds no output shapes: unknown (None), not [] (which reads as a scalar)
    graph_outputs = [helper.make_tensor_value_info(t, TensorProto.UNDEFINED, None)
                     for t in outputs if t in known]
    onnx_graph = helper.make_graph(nodes, str(_config(model).get("name") or "keras"), [],
                                   graph_outputs)
    made = helper.make_model(onnx_graph, producer_name="Keras model config",
                             opset_imports=[helper.make_opsetid(DOMAIN, 1),
                                            helper.make_opsetid("", 17)])
    return made.SerializeToString()


class _Graph:
    """Layer nodes ``[name, class, inputs, attributes]`` in the order they are defined. As in
    TensorBoard, a layer called several times (a shared layer, a model used twice) is one
    node with the inputs of every call."""

    def __init__(self) -> None:
        self.nodes: list[list] = []
        self.index: dict[str, list] = {}
        self.models: dict[str, tuple[list[str], list[str]]] = {}  # scope -> entries, outputs

    def model(self, model: dict, scope: str, inputs: list[str], depth: int) -> list[str]:
        """Adds a model's layers under ``scope``/its name; ``inputs`` feed its input layers.
        Returns the tensors of its outputs."""
        if depth > _MAX_DEPTH:
            raise ValueError(f"Keras models nested over {_MAX_DEPTH} deep")
        config = _config(model)
        scope += _name(model) + "/"
        layers = [layer for layer in _list(config.get("layers")) if isinstance(layer, dict)]
        if model.get("class_name") == "Sequential" or not any(
                _list(layer.get("inbound_nodes")) for layer in layers):
            current = inputs
            for layer in layers:
                current = self._layer(layer, scope, current, depth)
            entries = [scope + _name(layers[0])] if layers else []
        else:
            entries = [scope + key[0] for key in
                       (_history(ref) for ref in _refs(config.get("input_layers"))) if key]
            fed = {name: [t] for name, t in zip(entries, inputs)}
            for layer in layers:
                for call in _list(layer.get("inbound_nodes")) or [None]:
                    sources = [self._tensor(scope, key) for key in _call_refs(call)] \
                        if call else fed.get(scope + _name(layer), [])
                    self._layer(layer, scope, sources, depth)
            current = [self._tensor(scope, key) for key in
                       (_history(ref) for ref in _refs(config.get("output_layers"))) if key]
        self.models[scope] = (entries, current)
        return current

    def _layer(self, layer: dict, scope: str, inputs: list[str], depth: int) -> list[str]:
        """Adds one call of a layer; returns its output tensors."""
        name = scope + _name(layer)
        if layer.get("class_name") in _MODELS and _config(layer).get("layers"):
            called = self.models.get(name + "/")
            if called is None:
                return self.model(layer, scope, inputs, depth + 1)
            entries, outputs = called  # a later call feeds the same input layers
            for entry, tensor in zip(entries, inputs):
                self._feed(entry, [tensor])
            return outputs
        if name not in self.index:
            self.index[name] = [name, str(layer.get("class_name") or "Layer"), [],
                                _attributes(_config(layer))]
            self.nodes.append(self.index[name])
        self._feed(name, inputs)
        return [name]

    def _tensor(self, scope: str, key: tuple[str, int, int]) -> str:
        """The node giving ``(layer, call, output)``: a nested model's own output layer."""
        called = self.models.get(scope + key[0] + "/")
        if called is None:
            return scope + key[0]
        outputs = called[1]
        return outputs[min(key[2], len(outputs) - 1)] if outputs else scope + key[0]

    def _feed(self, name: str, inputs: list[str]) -> None:
        node = self.index.get(name)
        if node is not None:
            node[2].extend(i for i in inputs if i != name and i not in node[2])


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _config(model: dict) -> dict:
    """A model's config; Keras 1 and early Keras 2 wrote a Sequential's as its layer list."""
    config = model.get("config")
    if isinstance(config, list):
        return {"layers": config}
    return config if isinstance(config, dict) else {}


def _name(layer: dict) -> str:
    name = layer.get("name") or _config(layer).get("name") or "layer"
    return str(name).replace("/", "_")


def _attributes(config: dict) -> list[tuple[str, Any]]:
    """The settings worth reading in the properties panel: numbers, strings, flags and
    short lists of numbers (units, activation, kernel_size, rate, ...)."""
    out = []
    for key in sorted(config):
        value = config[key]
        if key == "name" or value is None:
            continue
        if isinstance(value, bool):
            out.append((key, str(value).lower()))
        elif isinstance(value, (int, float, str)):
            out.append((key, value if not isinstance(value, float) else float(value)))
        elif isinstance(value, list) and len(value) <= 16 and all(
                v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
                for v in value):
            out.append((key, "[" + ", ".join("?" if v is None else str(v) for v in value) + "]"))
        elif isinstance(value, dict) and isinstance(value.get("class_name"), str):
            out.append((key, value["class_name"]))  # an initializer, a dtype policy
    return out


def _refs(value: Any) -> list:
    """``input_layers``/``output_layers``: one ``[name, node, tensor]`` or a list of them
    (Keras 3 may also nest them in dicts)."""
    if isinstance(value, list) and len(value) >= 3 and isinstance(value[0], str):
        return [value]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _history(ref: Any) -> tuple[str, int, int] | None:
    if isinstance(ref, list) and len(ref) >= 3 and isinstance(ref[0], str):
        try:
            return ref[0], int(ref[1]), int(ref[2])
        except (TypeError, ValueError):
            return None
    return None


def _call_refs(call: Any) -> list[tuple[str, int, int]]:
    """The tensors one call of a layer takes, in order, in either dialect."""
    if isinstance(call, dict):  # Keras 3: {"args": [...], "kwargs": {...}}
        return list(_keras3_history(call))
    if isinstance(call, list):  # Keras 2: [[name, node, tensor, kwargs], ...]
        return [key for key in (_history(ref) for ref in call) if key]
    return []


def _keras3_history(value: Any) -> Iterator[tuple[str, int, int]]:
    if isinstance(value, dict):
        config = value.get("config")
        if value.get("class_name") == "__keras_tensor__" and isinstance(config, dict):
            key = _history(config.get("keras_history"))
            if key:
                yield key
            return
        for v in value.values():
            yield from _keras3_history(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keras3_history(v)
