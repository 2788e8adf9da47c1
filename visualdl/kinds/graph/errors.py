"""The graph component's error, in a module of its own so that importing it (as the API
does at start-up) does not import ``onnx``, which costs about a tenth of a second."""

__all__ = ["ModelError"]


class ModelError(ValueError):
    """The input is not a readable ONNX model; the message says why, for the user."""
