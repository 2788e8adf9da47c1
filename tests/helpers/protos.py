"""Checks that a committed ``*_pb2.py`` was generated from the ``.proto`` beside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

__all__ = ["assert_pb2_current"]


def assert_pb2_current(proto: Path, module: Any, tmp_path: Path) -> None:
    """Compile ``proto`` with grpcio-tools' protoc and compare it with ``module``'s
    descriptor; the message says which module to regenerate."""
    out = tmp_path / (proto.stem + ".desc")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", str(proto.parent),
                    f"--descriptor_set_out={out}", proto.name], check=True)
    fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    _strip_json_names(fresh.message_type)  # protoc adds them; the gencode leaves them out
    committed = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    assert fresh == committed, f"regenerate {module.__name__} from {proto}"


def _strip_json_names(messages: Any) -> None:
    for message in messages:
        for field in message.field:
            field.ClearField("json_name")
        _strip_json_names(message.nested_type)
