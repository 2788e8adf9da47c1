"""The model graph component: ONNX parsing, name-scope hierarchy, layered layout, queries.

``parse`` turns ONNX into plain data, ``hierarchy`` groups nodes by name scope, ``layout``
lays each group out with igraph's Sugiyama layout, ``view`` composes what is visible for a
collapse state, ``document`` answers the API's questions about one model, and ``store``
knows where models come from (``--model`` files, ``add_graph`` logs, uploads).
"""

from visualdl.server.graph.document import GraphDocument
from visualdl.server.graph.measure import Options
from visualdl.server.graph.parse import ModelError, parse_bytes, parse_model, parse_path
from visualdl.server.graph.store import ModelStore

__all__ = ["GraphDocument", "ModelError", "ModelStore", "Options", "parse_bytes",
           "parse_model", "parse_path"]
