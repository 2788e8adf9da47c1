"""Embeddings: a float32 matrix with metadata rows, projected to 2-D/3-D on request."""

from visualdl.kinds.spec import Kind

KIND = Kind("embedding", __name__, message="embedding", blob=True, views=("embeddings",))
