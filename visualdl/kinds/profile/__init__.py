"""Profiles: Chrome trace-event JSON of profiled training steps (ours or PyTorch's
``*.pt.trace.json[.gz]`` files, see :mod:`visualdl.sources.torchtrace`), shown by the
Profiler tab (overview, operators, timeline, memory, compare).

The kind's domain code lives here too: ``parse`` reads a trace into columns, ``nesting``
and ``model`` nest and classify its events, ``views`` cuts what each tab shows; ``build``
makes a model (``store``: the disk cache, ``runner``: a big trace parsed off the server's
process), ``warm`` builds the newest one before the tab asks."""

from visualdl.kinds.spec import Kind

KIND = Kind("profile", __name__, message="profile", blob=True,
            parts=("write", "read", "api"), views=("profile",))
