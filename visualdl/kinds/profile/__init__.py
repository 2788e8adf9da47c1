"""Profiles: Chrome trace-event JSON of profiled training steps (ours or PyTorch's
``*.pt.trace.json[.gz]`` files, see :mod:`visualdl.sources.torchtrace`), shown by the
profiler dashboard (overview, operators, timeline, memory, compare)."""

from visualdl.kinds.spec import Kind

KIND = Kind("profile", __name__, message="profile", blob=True,
            parts=("write", "read", "api", "start"), views=("profile",))
