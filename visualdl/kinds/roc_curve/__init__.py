"""ROC curves: counts at each threshold, computed at write time."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="roc_curve",
    message="roc_curve",
    write="visualdl.kinds.roc_curve.write",
    read="visualdl.kinds.roc_curve.read",
    api="visualdl.kinds.roc_curve.api",
    views=("roc_curves",),
)
