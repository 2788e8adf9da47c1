"""Images: PNG bytes per step, indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="image",
    message="image",
    blob=True,
    write="visualdl.kinds.image.write",
    read="visualdl.kinds.image.read",
    api="visualdl.kinds.image.api",
    views=("images",),
)
