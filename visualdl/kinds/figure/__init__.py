"""Figures: plotly JSON (drawn interactive) or matplotlib PNG."""

from visualdl.kinds.spec import Kind

KIND = Kind("figure", __name__, message="figure", blob=True, views=("figures",))
