"""Kinds of logged data, each declared once (see :mod:`visualdl.kinds.spec`).

``registry`` finds them: the built-in units in this package's subfolders and third-party
kinds registered through the ``visualdl.kinds`` entry-point group.
"""

from visualdl.kinds.spec import Kind

__all__ = ["Kind"]
