"""Histograms: buckets per step, computed at write time; shown as histograms and as
distributions (percentile bands over steps)."""

from visualdl.kinds.spec import Kind

KIND = Kind("histogram", __name__, message="histogram", views=("histograms", "distributions"))
