"""Model graphs: ONNX bytes. The graph component (parse, layout, queries) lives in
``visualdl.server.graph``: it also serves ``--model`` files and uploads, which are no record kind."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="graph",
    message="graph",
    blob=True,
    write="visualdl.kinds.graph.write",
    read="visualdl.kinds.graph.read",
    api="visualdl.kinds.graph.api",
    views=("graph",),
)
