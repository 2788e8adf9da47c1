"""``vf.jit``: eager code traced into a static program (``trace``), and exported programs run
again by the framework's own kernels (``load``) -- "written dynamically, exported statically".
"""

from .interpreter import TranslatedLayer, UnsupportedOpError, load
from .program import Node, Program, ValueInfo
from .trace import InputSpec, TraceError, trace

__all__ = [
           "InputSpec",
           "Node",
           "Program",
           "TraceError",
           "TranslatedLayer",
           "UnsupportedOpError",
           "ValueInfo",
           "load",
           "trace",
]
