"""Shape inference and onnx.checker for one model, in a process of its own.

onnx's C++ inference and checker hold the GIL for their whole run (about a second each per
50,000 nodes), so on the server's thread they would add to the time before the first view.
Run here, they take a core of their own while the server builds the graph and its groups.

Started as ``python -I -S infer_worker.py <onnx C++ extension path> <check 0|1>``: only the
standard library and onnx's compiled module are loaded (by path, without the onnx package
and protobuf, so the process is up in tens of milliseconds). It reads the model's bytes on
stdin and writes two answers on stdout, each ``status byte, 8-byte length, payload``:

1. inference: ``b"0"`` + the inferred model's bytes, or ``b"1"`` + the error (type name,
   a NUL, its text) when inference raised;
2. only when asked: the checker on the inferred model (the given one when inference raised):
   ``b"0"`` + nothing, or ``b"1"`` + the error as above. The process runs it at a lower
   priority (``nice`` +5): by then the first view is what the server and browser work on.

It loads nothing but its arguments name, and its only output is on stdout.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import struct
import sys

CHECKER_NICE = 5  # a third of a core's share against the parse, not a starved checker


def _load(path: str):  # noqa: ANN202 - a compiled module with no type stubs here
    loader = importlib.machinery.ExtensionFileLoader("onnx.onnx_cpp2py_export", path)
    spec = importlib.util.spec_from_file_location("onnx.onnx_cpp2py_export", path, loader=loader)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    loader.exec_module(module)
    return module


def _send(out, status: bytes, payload: bytes) -> None:  # noqa: ANN001 - a binary stream
    out.write(status + struct.pack("<Q", len(payload)))
    out.write(payload)
    out.flush()


def _error(err: BaseException) -> bytes:
    return type(err).__name__.encode() + b"\0" + str(err).encode("utf-8", "replace")


def _lower_priority() -> None:
    try:
        os.nice(CHECKER_NICE)
    except (AttributeError, OSError):  # not on this platform, or not allowed: run as is
        pass


def main(argv: list[str]) -> int:
    """Infer, answer, then check and answer (see the module's docstring)."""
    cpp = _load(argv[1])
    check = argv[2] == "1"
    raw = sys.stdin.buffer.read()
    out = sys.stdout.buffer
    model = raw
    try:
        model = cpp.shape_inference.infer_shapes(raw, False, False, True)
        _send(out, b"0", model)
    except Exception as err:  # noqa: BLE001 - told to the server, which makes it a warning
        _send(out, b"1", _error(err))
    if check:
        # Nothing waits for the checker until the model's summary: the parse and the first
        # view (and the browser drawing it, on a machine of two cores) get the CPU first.
        _lower_priority()
        try:
            cpp.checker.check_model(model, False, False, False)
            _send(out, b"0", b"")
        except Exception as err:  # noqa: BLE001 - as above
            _send(out, b"1", _error(err))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
