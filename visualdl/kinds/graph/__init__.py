"""Model graphs: ONNX bytes. The graph component (parse, layout, queries) lives in
``visualdl.server.graph``: it also serves ``--model`` files and uploads, which are no record kind."""

from visualdl.kinds.spec import Kind

KIND = Kind("graph", __name__, message="graph", blob=True, views=("graph",))
