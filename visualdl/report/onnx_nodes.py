"""The operators of an ONNX model, read with a three-message subset of ONNX's schema
(ModelProto.graph, GraphProto.node, NodeProto's inputs, outputs, name and op type) built
with protobuf's descriptors: protobuf skips every other field, and a report does not pay
for importing the ``onnx`` package (half a second) to list a model's operators."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["onnx_nodes"]

_FIELDS = {  # message -> (name, number, repeated, type)
    "ModelProto": [("graph", 7, False, "GraphProto")],
    "GraphProto": [("node", 1, True, "NodeProto")],
    "NodeProto": [("input", 1, True, None), ("output", 2, True, None), ("name", 3, False, None),
                  ("op_type", 4, False, None)],
}


@lru_cache(maxsize=1)
def _model_class() -> Any:
    proto = descriptor_pb2.FileDescriptorProto(name="visualdl_report_onnx_subset.proto",
                                               package="visualdl_report_onnx", syntax="proto2")
    F = descriptor_pb2.FieldDescriptorProto
    for message, fields in _FIELDS.items():
        msg = proto.message_type.add(name=message)
        for name, number, repeated, ref in fields:
            field = msg.field.add(name=name, number=number,
                                  label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if ref:
                field.type, field.type_name = F.TYPE_MESSAGE, f".visualdl_report_onnx.{ref}"
            else:
                field.type = F.TYPE_STRING
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(
        "visualdl_report_onnx.ModelProto"))


def onnx_nodes(raw: bytes) -> list[list]:
    """[op_type, name, inputs, outputs] per operator of the main graph, in the model's order
    (ONNX requires it topological). ``google.protobuf.message.DecodeError`` for bad bytes."""
    model = _model_class().FromString(raw)
    return [[n.op_type, n.name, list(n.input), list(n.output)] for n in model.graph.node]
