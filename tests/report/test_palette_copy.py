"""report.js carries its own copy of the dashboard's run colors (web/js/shared/colors.js):
the report is one standalone file with no module loading, so it cannot import the module.
This keeps the copy from drifting: a run must get the same color in both."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT_JS = ROOT / "visualdl" / "report" / "assets" / "report.js"
COLORS_JS = ROOT / "web" / "js" / "shared" / "colors.js"


def _palette(source: str) -> list[str]:
    found = re.search(r"PALETTE = \[(.*?)\];", source, re.S)
    assert found, "no PALETTE array"
    return re.findall(r"'(#[0-9a-fA-F]{6})'", found.group(1))


def _hash_body(source: str) -> str:
    found = re.search(r"function hash\(text\) \{(.*?)\n\s*\}\n", source, re.S)
    assert found, "no hash function"
    return re.sub(r"\s+", "", found.group(1))


def test_report_palette_is_the_dashboards():
    report, colors = REPORT_JS.read_text(), COLORS_JS.read_text()
    assert len(_palette(colors)) == 24
    assert _palette(report) == _palette(colors)


def test_report_hash_is_the_dashboards():
    report, colors = REPORT_JS.read_text(), COLORS_JS.read_text()
    assert "Math.imul(h,16777619)" in _hash_body(colors)
    assert _hash_body(report) == _hash_body(colors)
