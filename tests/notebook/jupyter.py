"""Running notebooks for real: nbformat documents executed by nbclient on an ipykernel kernel.

The kernel is this interpreter (``sys.executable``, so the venv's packages), declared by a
kernelspec written into a temporary JUPYTER_PATH: nothing is installed into the user's
Jupyter folders, and a fresh clone needs no setup step. The kernel imports this checkout's
``visualdl`` (PYTHONPATH), and so do the servers it starts.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import REPO

__all__ = ["KERNEL_NAME", "html_outputs", "install_kernelspec", "iframe_srcs", "iframes",
           "run_notebook", "stream_text"]

KERNEL_NAME = "visualdl-test"
_IFRAME = re.compile(r"<iframe\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r'([a-zA-Z-]+)="([^"]*)"')


def install_kernelspec(jupyter_path: Path) -> Path:
    """Write the test kernel's kernelspec under ``jupyter_path`` (put it on JUPYTER_PATH)."""
    folder = jupyter_path / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "visualdl tests (this venv)",
        "language": "python",
        "env": {"PYTHONPATH": str(REPO)},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return folder


def run_notebook(cells: list[str], cwd: Path, timeout: float = 180) -> Any:
    """Execute a notebook of ``cells`` (code) in ``cwd``; returns the executed notebook.
    A cell that raises fails the run (nbclient's CellExecutionError)."""
    # the test extra's notebook packages; a test that runs a notebook skips without them
    nbformat = pytest.importorskip("nbformat")
    NotebookClient = pytest.importorskip("nbclient").NotebookClient
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": KERNEL_NAME,
                                 "language": "python"}
    client = NotebookClient(nb, timeout=timeout, startup_timeout=120, kernel_name=KERNEL_NAME,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    nbformat.validate(nb)
    return nb


def iframes(cell: Any) -> list[dict[str, str]]:
    """The attributes of every iframe in the cell's text/html outputs."""
    found = []
    for output in cell.outputs:
        markup = output.get("data", {}).get("text/html") if output.output_type in (
            "display_data", "execute_result") else None
        if markup is None:
            continue
        markup = "".join(markup) if isinstance(markup, list) else markup
        for tag in _IFRAME.findall(markup):
            found.append({k: html.unescape(v) for k, v in _ATTRIBUTE.findall(tag)})
    return found


def iframe_srcs(cell: Any) -> list[str]:
    return [frame["src"] for frame in iframes(cell)]


def html_outputs(cell: Any) -> str:
    """Every text/html output of the cell, joined: what a notebook page would show."""
    parts = []
    for output in cell.outputs:
        if output.output_type in ("display_data", "execute_result"):
            markup = output.get("data", {}).get("text/html")
            if markup:
                parts.append("".join(markup) if isinstance(markup, list) else markup)
    return "\n".join(parts)


def stream_text(cell: Any, name: str = "stdout") -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == name)
