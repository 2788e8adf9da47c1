"""Scalars: numbers per step, packed per tag (the writer's and reader's fast paths are
in ``visualdl.format.scalar_codec``), downsampled on query keeping each bucket's min and max."""

from visualdl.kinds.spec import Kind

KIND = Kind("scalar", __name__, message="scalars", parts=("api",), views=("scalars",))
