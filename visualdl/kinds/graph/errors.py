"""The graph component's error, in a module of its own so that importing it (as the API
does at start-up) does not import ``onnx``, which costs about a tenth of a second."""

__all__ = ["ModelError", "ModelRefused"]


class ModelError(ValueError):
    """The input is not a readable ONNX model; the message says why, for the user."""


class ModelRefused(ModelError):
    """The input was recognised (an ONNX model, a Paddle program) or is too large to read,
    and is refused for a reason of its own (too many nodes, IR version 0, the file's size).
    Why a class of its own: the message is the whole answer, so no other format is tried
    and no "neither ... nor" is wrapped around it."""
