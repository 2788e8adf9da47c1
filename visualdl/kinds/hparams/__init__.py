"""Hyper-parameters: one set per run (the latest wins) and the scalar tags that measure it."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="hparams",
    message="hparams",
    write="visualdl.kinds.hparams.write",
    read="visualdl.kinds.hparams.read",
    api="visualdl.kinds.hparams.api",
    views=("hparams",),
)
