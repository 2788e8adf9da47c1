"""Profiles: Chrome trace-event JSON of profiled training steps (ours or PyTorch's)."""

from visualdl.kinds.spec import Kind

KIND = Kind("profile", __name__, message="profile", blob=True, parts=("write", "read"))
