"""Histograms: buckets per step, computed at write time; shown as histograms and as
distributions (percentile bands over steps)."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="histogram",
    message="histogram",
    write="visualdl.kinds.histogram.write",
    read="visualdl.kinds.histogram.read",
    api="visualdl.kinds.histogram.api",
    views=("histograms", "distributions"),
)
