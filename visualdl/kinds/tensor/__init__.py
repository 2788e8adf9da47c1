"""Tensors: arrays of numbers per step (add_tensor, TensorBoard's tensor summaries); one
record each, indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("tensor", __name__, message="tensor", blob=True, views=("tensors",))
