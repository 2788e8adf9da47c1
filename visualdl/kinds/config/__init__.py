"""A run's whole configuration: a nested dict, ``argparse.Namespace``, dataclass, OmegaConf
config or YAML/JSON file, recorded by ``add_config`` and kept nested and flattened to dotted
keys. It belongs to the run (one tag, named after the kind); the comparison view shows it
beside the run's hyper-parameters (see :mod:`.merge`)."""

from visualdl.kinds.spec import Kind

# ``merge`` (the run's config view) is a part too, so the reader reaches it by name
KIND = Kind("config", __name__, message="config", views=("compare",),
            parts=("write", "read", "api", "merge"))
