"""Videos: a browser-playable file (MP4, or GIF without PyAV) per step, indexed by file
offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("video", __name__, message="video", blob=True, views=("video",))
