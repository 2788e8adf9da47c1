"""Precision-recall curves: counts at each threshold, computed at write time."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="pr_curve",
    message="pr_curve",
    write="visualdl.kinds.pr_curve.write",
    read="visualdl.kinds.pr_curve.read",
    api="visualdl.kinds.pr_curve.api",
    views=("pr_curves",),
)
