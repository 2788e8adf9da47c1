"""igraph is imported for the layout without the matplotlib.pyplot it would import itself
(about 0.6 s before a model's first view), and matplotlib stays importable afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed: nothing is blocked")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_layout_imports_igraph_without_pyplot() -> None:
    out = _run(
        "import sys\n"
        "from visualdl.kinds.graph.layout import Layouter\n"
        "from visualdl.kinds.graph.igraph_lib import igraph\n"
        "print('pyplot' if 'matplotlib.pyplot' in sys.modules else 'no pyplot')\n"
        "print(igraph.Graph(n=3, edges=[(0, 1), (1, 2)], directed=True).layout_sugiyama().coords)\n"
        "import matplotlib.pyplot as plt\n"  # the block is gone: a script's figures still work
        "fig = plt.figure(); print(type(fig).__name__)\n")
    assert out.splitlines() == ["no pyplot", "[[0.0, 0.0], [0.0, 1.0], [0.0, 2.0]]", "Figure"]


def test_matplotlib_imported_first_is_left_alone() -> None:
    out = _run(
        "import matplotlib\n"
        "from visualdl.kinds.graph.igraph_lib import igraph\n"
        "import sys\n"
        "print(sys.modules['matplotlib'] is matplotlib, 'matplotlib.pyplot' in sys.modules)\n")
    assert out == "True True"  # igraph imported pyplot itself, as it does without us
