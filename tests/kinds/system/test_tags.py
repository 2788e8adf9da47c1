"""System tags are listed as a kind of their own: exactly the tags under ``system/``, none
that merely start with the word, and the rest stay scalars (in order)."""

from visualdl.kinds import registry
from visualdl.kinds.system import names


def test_split_takes_exactly_the_system_block():
    tags = ["a", "system", "system/h/cpu/percent", "system/h/gpu0/memory_used_bytes",
            "system0", "systemx/y", "z"]
    assert registry.split_scalar_tags(tags) == {
        "scalar": ["a", "system", "system0", "systemx/y", "z"],
        "system": ["system/h/cpu/percent", "system/h/gpu0/memory_used_bytes"]}
    assert list(registry.split_scalar_tags(["system/h/m", "zz"])) == ["scalar", "system"]
    assert registry.split_scalar_tags(["system/h/m"]) == {"system": ["system/h/m"]}
    assert registry.split_scalar_tags(["loss"]) == {"scalar": ["loss"]}
    assert registry.scalar_kind_of("system/h/m") == "system"
    assert registry.scalar_kind_of("systemic") == "scalar"


def test_names_split_host_and_metric():
    assert names.split("system/node-1.local/gpu3/power_watts") == ("node-1.local", "gpu3/power_watts")
    assert names.split(names.tag(names.host_name("a/b"), "cpu/percent")) == ("a_b", "cpu/percent")
    assert names.split("system/host") is None and names.split("loss") is None
