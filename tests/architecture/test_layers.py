"""The layering rules of ARCHITECTURE.md, checked on every import statement of the package
(lazy ones inside functions and TYPE_CHECKING ones too):

* no import cycle between packages (``visualdl.<package>``; the root ``visualdl``, the
  public face, counts as one) outside ``visualdl/framework/``;
* layers never look up: ``format`` imports nothing of ours, ``storage`` no log format, no
  writer and nothing above, ``sources`` no reader, writer or server, ``writer`` no reader,
  server or framework, ``reader`` no server; nothing below imports the framework;
* no ``_private`` name of another package is imported or reached as an attribute;
* a kind's code lives in its ``kinds/<kind>/``: the server imports no kind but the registry;
* no web view module is over ~400 lines.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "visualdl"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports() -> list[tuple[str, str, str | None, int]]:
    """``(module, imported module, imported name or None, line)`` for every import."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(module, a.name, None, node.lineno) for a in node.names
                          if a.name.split(".")[0] == "visualdl"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "visualdl":
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if _is_module(sub):  # ``from visualdl import storage``: the module
                        found.append((module, sub, None, node.lineno))
                    else:
                        found.append((module, target, alias.name, node.lineno))
    return found


IMPORTS = _imports()


def package_of(module: str) -> str:
    """``visualdl.reader.log_reader`` -> ``reader``; the root module is ``visualdl``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "visualdl"


def _graph(skip: str = "framework") -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, target, _, _ in IMPORTS:
        a, b = package_of(module), package_of(target)
        if a != b and skip not in (a, b):
            edges[a].add(b)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def _where(a: str, b: str) -> list[str]:
    return [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
            if package_of(m) == a and package_of(t) == b]


def test_the_checker_sees_lazy_imports():
    """A sanity check of the checker itself: it finds an import inside a function."""
    assert any(m == "visualdl.cli" and t == "visualdl.convert" for m, t, _, _ in IMPORTS)


def test_no_import_cycle_between_packages():
    edges = _graph()
    cycles = _cycles(edges)
    detail = [line for cycle in cycles for a in cycle for b in cycle if b in edges.get(a, ())
              for line in _where(a, b)]
    assert cycles == [], "\n".join(detail)


# package -> packages it must never import (what stands above it, or beside it)
FORBIDDEN = {
    "format": {"*"},
    "storage": {"sources", "writer", "reader", "kinds", "api", "server", "series", "compat",
                "report", "convert", "export", "cli", "notebook", "framework", "tracking",
                "visualdl"},
    "series": {"*"},
    "sources": {"reader", "writer", "server", "kinds", "api", "compat", "convert", "export",
                "report", "cli", "notebook", "framework", "tracking", "visualdl"},
    "api": {"reader", "writer", "server", "kinds", "cli", "framework", "report", "tracking",
            "visualdl"},
    "kinds": {"reader", "writer", "server", "compat", "convert", "export", "cli", "notebook",
              "report", "framework", "tracking", "visualdl"},
    "writer": {"reader", "server", "framework", "cli", "convert", "export", "notebook", "report",
               "tracking", "visualdl"},
    "reader": {"server", "writer", "framework", "cli", "convert", "export", "notebook", "report",
               "tracking", "visualdl"},
    "server": {"cli", "convert", "export", "notebook", "framework", "tracking", "visualdl"},
    # a report reads through the kinds' modules (any data source) and is served by the server
    "report": {"reader", "writer", "server", "compat", "convert", "export", "cli", "notebook",
               "framework", "tracking", "visualdl"},
    # the wandb-style API sits on the writer; it is loaded in training scripts
    "tracking": {"reader", "server", "framework", "cli", "convert", "export", "notebook",
                 "api", "report", "visualdl"},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layers_never_look_up(package):
    banned = FORBIDDEN[package]
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) == package and package_of(t) != package
           and ("*" in banned or package_of(t) in banned)]
    assert bad == []


def test_no_private_name_crosses_a_package():
    bad = [f"{m}:{line} imports {t}.{name}" for m, t, name, line in IMPORTS
           if name and name.startswith("_") and not name.startswith("__")
           and package_of(m) != package_of(t)]
    # attributes reached through an imported module: ``scalar_codec._scan_record``
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("visualdl"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    if _is_module(sub):
                        aliases[alias.asname or alias.name] = sub
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("visualdl.") and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id in aliases and node.attr.startswith("_") and \
                    not node.attr.startswith("__"):
                target = aliases[node.value.id]
                if package_of(target) != package_of(module):
                    bad.append(f"{module}:{node.lineno} reaches {target}.{node.attr}")
    assert bad == []


def test_the_server_holds_no_kind_of_its_own():
    """Kinds live in ``kinds/<kind>/``; the server mounts them through the registry."""
    server = PACKAGE / "server"
    assert [p.name for p in server.iterdir() if p.is_dir() and p.name != "__pycache__"] == []
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) == "server" and t.startswith("visualdl.kinds.")
           and t not in ("visualdl.kinds.registry", "visualdl.kinds.spec")]
    assert bad == []


def test_nothing_below_imports_a_kinds_part_by_statement():
    """Writer and reader find the kinds' parts through the registry (by name), so a kind's
    API code (Flask) never loads with the writer."""
    bad = [f"{m}:{line} imports {t}" for m, t, _, line in IMPORTS
           if package_of(m) in ("writer", "reader", "sources", "storage", "format")
           and t.startswith("visualdl.kinds.")
           and t.split(".")[2] not in ("registry", "spec", "checks")]
    assert bad == []


def test_view_modules_stay_small():
    views = ROOT / "web" / "js" / "views"
    big = {str(p.relative_to(views)): n for p in views.rglob("*.js")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 420}
    assert big == {}
