"""3-D point clouds and meshes: vertices, colours and triangles per step, indexed by file
offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("mesh", __name__, message="mesh", blob=True, views=("mesh",))
