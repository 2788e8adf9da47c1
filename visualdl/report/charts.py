"""Which scalar charts a report draws, as the scalars page decides them
(``web/js/views/scalars/layouts.js``): the custom layouts' multiline charts first, section
by category (their regexes matched against every scalar tag of the chosen runs); then one
chart per ``add_scalars`` call (a line per run and key) and one per remaining tag, in
sections by the part of the title before its first ``/``, ranked as the page opens
(``kinds/scalar/order``: losses and main metrics first, not the alphabet). Margin charts
are left out (said in the footer)."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.scalar.order import tier
from visualdl.series.patterns import PatternError, compile_pattern

__all__ = ["chart_specs"]

Line = tuple[str, str, str]  # (run, tag, label)


def _section(title: str) -> str:
    i = title.find("/")
    return title[:i] if i > 0 else ""


def _layout_charts(layouts: dict, runs: list[str], tags_of: dict[str, set[str]],
                   left_out: list[str]) -> list[tuple[str, dict]]:
    out = []
    for category in layouts.get("layout", []):
        for chart in category["charts"]:
            if chart["type"] == "margin":
                left_out.append(f"the margin chart {category['category']}/{chart['title']}")
                continue
            try:
                patterns = [compile_pattern(p, "layout regex") for p in chart["tags"]]
            except PatternError as err:
                left_out.append(f"the layout chart {chart['title']!r} ({err})")
                continue
            lines = [(run, tag, f"{run} · {tag}") for run in runs for tag in sorted(tags_of[run])
                     if any(p.search(tag) for p in patterns)]
            if lines:
                out.append((category["category"], {"title": chart["title"], "lines": lines}))
    return out


def chart_specs(layouts: dict, runs: list[str], tags_of: dict[str, set[str]],
                chosen: list[str], left_out: list[str],
                section_rank: dict[str, int] | None = None) -> list[tuple[str, list[dict]]]:
    """``[(section, [{"title", "tag"?, "lines": [(run, tag, label)]}])]`` in page order.
    ``tags_of``: each chosen run's scalar tags; ``chosen``: the tags the filter keeps;
    ``section_rank``: the page's order of sections (``order.order``; else by name)."""
    sections: dict[str, list[dict]] = {}
    for category, chart in _layout_charts(layouts, runs, tags_of, left_out):
        sections.setdefault(category, []).append(chart)
    keep = set(chosen)
    in_charts: set[str] = set()
    auto: list[tuple[str, int, dict]] = []
    for chart in layouts.get("charts", []):
        tags = [t for t in chart["tags"] if t in keep]
        if not tags:
            continue
        in_charts.update(chart["tags"])
        key_of = dict(zip(chart["tags"], chart["keys"]))
        lines = [(run, tag, f"{run} · {key_of[tag]}") for tag in chart["tags"] for run in runs
                 if tag in tags_of[run]]
        auto.append((chart["title"], 0, {"title": chart["title"], "lines": lines}))
    for tag in chosen:
        if tag not in in_charts:
            lines = [(run, tag, run) for run in runs if tag in tags_of[run]]
            auto.append((tag, 1, {"title": tag, "tag": tag, "lines": lines}))
    auto_sections: dict[str, list[dict]] = {}
    for title, _, chart in sorted(auto, key=lambda a: (tier(a[0]), a[0], a[1])):
        auto_sections.setdefault(_section(title), []).append(chart)
    rank = section_rank or {}
    ordered = sorted(auto_sections, key=lambda s: (rank.get(s, len(rank)), s == "", s))
    return list(sections.items()) + [(s, auto_sections[s]) for s in ordered]


def layouts_of(data: Any) -> dict:
    """The merged add_scalars charts and custom layouts (the custom_scalars kind's)."""
    from visualdl.kinds.custom_scalars.api import layouts

    return layouts(data)
