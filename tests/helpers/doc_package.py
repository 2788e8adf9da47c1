"""A docs page's example package, built and installed the way a user would: each fenced
block that names a file (```toml file=pyproject.toml) is written out, and pip installs the
project (no network, no build isolation) into a folder put on ``sys.path``."""

from __future__ import annotations

import contextlib
import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["doc_files", "installed_from_doc"]

FENCE = re.compile(r"^```\w+ file=(\S+)\n(.*?)^```", re.M | re.S)


def doc_files(doc: Path) -> dict[str, str]:
    """``{relative path: content}`` of every fenced block of ``doc`` that names a file."""
    return {name: body for name, body in FENCE.findall(doc.read_text(encoding="utf-8"))}


@contextlib.contextmanager
def installed_from_doc(doc: Path, root: Path, module: str, reset: Callable[[], None],
                       skip: tuple[str, ...] = ("example.py",)) -> Iterator[tuple[Path, dict]]:
    """Build and install the page's package (every named file but ``skip``) into
    ``root/site``; ``reset()`` makes visualdl look for plugins again. Yields the site folder
    and the page's files; afterwards the package is forgotten again."""
    project, site = root / module, root / "site"
    files = doc_files(doc)
    for name, body in files.items():
        if name not in skip:
            path = project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(site), str(project)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(site.glob("*.dist-info/entry_points.txt"))
    sys.path.insert(0, str(site))  # what installing into site-packages would do
    importlib.invalidate_caches()
    reset()
    try:
        yield site, files
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
            del sys.modules[name]
        reset()
