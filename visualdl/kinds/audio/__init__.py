"""Audio: WAV bytes per step, indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("audio", __name__, message="audio", blob=True, views=("audio",))
