"""Images: PNG bytes per step, indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("image", __name__, message="image", blob=True, views=("images",))
