"""Audio: WAV bytes per step, indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="audio",
    message="audio",
    blob=True,
    write="visualdl.kinds.audio.write",
    read="visualdl.kinds.audio.read",
    api="visualdl.kinds.audio.api",
    views=("audio",),
)
