"""Profiles: Chrome trace-event JSON of profiled training steps (ours or PyTorch's
``*.pt.trace.json[.gz]`` files, see :mod:`visualdl.sources.torchtrace`), shown by the
Profiler tab (overview, operators, timeline, memory, compare).

The kind's domain code lives here too: ``parse`` reads a trace into columns, ``nesting``
and ``model`` nest and classify its events, ``views`` cuts what each tab shows, and
``store``, ``cache`` and ``worker`` build and keep models of big traces off the request
path."""

from visualdl.kinds.spec import Kind

KIND = Kind("profile", __name__, message="profile", blob=True,
            parts=("write", "read", "api", "start"), views=("profile",))
