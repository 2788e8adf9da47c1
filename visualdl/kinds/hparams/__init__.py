"""Hyper-parameters: one set per run (the latest wins) and the scalar tags that measure it."""

from visualdl.kinds.spec import Kind

KIND = Kind("hparams", __name__, message="hparams", views=("hparams",),
            parts=("write", "read", "api", "table"))
