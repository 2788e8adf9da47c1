"""The workers of a data-parallel run: each rank's ``Worker`` record (rank, world size,
host, pid), written first in its own file, and the elastic restarts and resizes
(``LogWriter.add_resize``). A reader uses the first to keep each rank's series apart
(rank 0, or an untagged file, is the run's default series) and the API lists both
(``/api/ranks``)."""

from visualdl.kinds.spec import Kind

KIND = Kind("workers", __name__, message="worker")
