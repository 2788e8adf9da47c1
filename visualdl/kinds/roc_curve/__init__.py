"""ROC curves: counts at each threshold, computed at write time."""

from visualdl.kinds.spec import Kind

KIND = Kind("roc_curve", __name__, message="roc_curve", views=("roc_curves",))
