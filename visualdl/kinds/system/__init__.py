"""System metrics: the machine's state while a writer is open (CPU, memory, disk, network,
NVIDIA GPUs), sampled by a background thread of the writer and stored as plain scalars
under ``system/<host>/<metric>``, so that every reader, cache and download path handles
them; they are listed under this kind, not among a run's scalars."""

from visualdl.kinds.spec import Kind

KIND = Kind("system", __name__, message="scalars", parts=("sample", "api"),
            views=("system",), scalar_prefix="system/")
