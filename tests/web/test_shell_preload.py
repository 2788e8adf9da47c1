"""index.html preloads every module that app.js imports (statically, at any depth), so the
browser fetches the shell's modules beside app.js instead of one import level at a time,
and boot.js runs as its own module script before app.js (it asks the first questions)."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"
IMPORT = re.compile(r"""^\s*(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]""",
                    re.M)


def static_imports(entry: Path) -> set[str]:
    """Paths (relative to web/) of the modules `entry` imports statically, at any depth."""
    seen: set[Path] = set()
    todo = [entry.resolve()]
    while todo:
        module = todo.pop()
        for match in IMPORT.finditer(module.read_text(encoding="utf-8")):
            target = (module.parent / (match.group(1) or match.group(2))).resolve()
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return {p.relative_to(WEB.resolve()).as_posix() for p in seen}


def test_index_preloads_what_app_js_imports():
    html = (WEB / "index.html").read_text(encoding="utf-8")
    preloaded = set(re.findall(r'<link rel="modulepreload" href="static/([^"]+)">', html))
    wanted = static_imports(WEB / "js" / "app.js") - {"js/boot.js"}  # boot.js: its own <script>
    assert "js/shared/runlist.js" in wanted  # the parse found the imports
    assert preloaded == wanted


def test_boot_runs_before_app():
    html = (WEB / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script type="module" src="static/([^"]+)"></script>', html)
    assert scripts == ["js/boot.js", "js/app.js"]
    # boot.js stays small: it is the page's first module, before the shell's own
    assert static_imports(WEB / "js" / "boot.js") == {"js/shared/state.js", "js/shared/api.js"}
