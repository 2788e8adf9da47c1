"""Embeddings: a float32 matrix with metadata rows, projected to 2-D/3-D on request."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="embedding",
    message="embedding",
    blob=True,
    write="visualdl.kinds.embedding.write",
    read="visualdl.kinds.embedding.read",
    api="visualdl.kinds.embedding.api",
    views=("embeddings",),
)
