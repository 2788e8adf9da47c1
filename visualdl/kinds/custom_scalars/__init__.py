"""Charts that combine scalar series: the charts ``add_scalars`` draws (one per main tag, a
line per key) and TensorBoard-style custom layouts (``add_custom_scalars``). They belong to
the run (one tag, named after the kind) and have no view of their own: the scalars view
draws them."""

from visualdl.kinds.spec import Kind

KIND = Kind("custom_scalars", __name__, message="custom_scalars", views=())
