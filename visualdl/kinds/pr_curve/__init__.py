"""Precision-recall curves: counts at each threshold, computed at write time."""

from visualdl.kinds.spec import Kind

KIND = Kind("pr_curve", __name__, message="pr_curve", views=("pr_curves",))
