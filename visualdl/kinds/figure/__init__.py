"""Figures: plotly JSON (drawn interactive) or matplotlib PNG."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="figure",
    message="figure",
    blob=True,
    write="visualdl.kinds.figure.write",
    read="visualdl.kinds.figure.read",
    api="visualdl.kinds.figure.api",
    views=("figures",),
)
