"""A broken plugin never takes visualdl down: an entry point that fails to import, or names
something that is no Kind or Source, is left out with a warning naming it, and the good
ones of the same group still load."""

from __future__ import annotations

import importlib
import sys

import pytest

from visualdl.kinds import registry as kinds
from visualdl.sources import registry as sources


@pytest.fixture
def broken_plugins(tmp_path):
    dist = tmp_path / "vdl_broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vdl-broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[visualdl.sources]\n"
        "missing = vdl_broken_nowhere:SOURCE\n"
        "not_a_source = vdl_broken_mod:NOT_ONE\n"
        "good = vdl_broken_mod:SOURCE\n"
        "[visualdl.kinds]\n"
        "missing = vdl_broken_nowhere:KIND\n"
        "not_a_kind = vdl_broken_mod:NOT_ONE\n")
    (tmp_path / "vdl_broken_mod.py").write_text(
        "from visualdl.sources.base import Source\n"
        "class Good(Source):\n"
        "    name = 'broken_demo_good'\n"
        "    def claims(self, name): return name.endswith('.never-a-log')\n"
        "    def open(self, path): raise NotImplementedError\n"
        "SOURCE = Good()\n"
        "NOT_ONE = object()\n")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    sources.reset()
    kinds.reset()
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("vdl_broken_mod", None)
        sources.reset()
        kinds.reset()


def test_broken_sources_warn_and_the_good_one_loads(broken_plugins):
    with pytest.warns(RuntimeWarning) as caught:
        found = sources.load_plugins()
    messages = [str(w.message) for w in caught]
    assert [s.name for s in found] == ["broken_demo_good"]
    assert any("'missing' failed to load" in m for m in messages)
    assert any("'not_a_source' is not a named visualdl.sources.base.Source" in m
               for m in messages)
    assert sources.claims("x.never-a-log") and sources.get("visualdl")  # built-ins still there


def test_broken_kinds_warn_and_the_built_ins_stay(broken_plugins):
    with pytest.warns(RuntimeWarning) as caught:
        names = kinds.names()
    messages = [str(w.message) for w in caught]
    assert any("kind plugin 'missing' failed to load" in m for m in messages)
    assert any("'not_a_kind' is not a plugin Kind" in m for m in messages)
    assert "scalar" in names and "profile" in names
