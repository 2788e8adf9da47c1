"""Combined charts, writer side: TensorBoard's custom-scalars layout dictionary, checked
here so that a mistake is reported where it was made (naming the category and the title),
and the chart an ``add_scalars`` call draws."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from visualdl.kinds.checks import check_tag, check_text_size, check_utf8

__all__ = ["check", "chart", "encode", "normalize_layout"]

#: TensorBoard's chart types, as its layout dictionary spells them.
MULTILINE, MARGIN = "Multiline", "Margin"


def _text(where: str, what: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{where}: {what} must be a non-empty str, got {value!r}")
    check_utf8(where, what, value)
    return value


def normalize_layout(layout: Any) -> dict[str, dict[str, list]]:
    """``{category: {title: ["Multiline", [tag_regex, ...]] | ["Margin", [value, lower,
    upper]]}}`` as TensorBoard's ``layout`` takes it, checked and copied (lists, not tuples).
    Raises ``TypeError``/``ValueError`` naming the category and title at fault."""
    if not isinstance(layout, Mapping) or not layout:
        raise TypeError("layout must be a non-empty dict {category: {title: [type, [tags]]}}")
    out: dict[str, dict[str, list]] = {}
    for category, charts in layout.items():
        _text("layout", "a category name", category)
        if not isinstance(charts, Mapping) or not charts:
            raise TypeError(f"layout[{category!r}] must be a non-empty dict {{title: [type, [tags]]}}")
        out[category] = {}
        for title, spec in charts.items():
            where = f"layout[{category!r}][{title!r}]"
            _text(where, "a chart title", title)
            out[category][title] = _chart_spec(where, spec)
    return out


def _chart_spec(where: str, spec: Any) -> list:
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or len(spec) != 2:
        raise TypeError(f"{where} must be [\"Multiline\", [tag_regex, ...]] or "
                        f"[\"Margin\", [value_tag, lower_tag, upper_tag]], got {spec!r}")
    kind, tags = spec
    if kind not in (MULTILINE, MARGIN):
        raise ValueError(f"{where}: chart type must be \"Multiline\" or \"Margin\", got {kind!r}")
    if isinstance(tags, (str, bytes)) or not isinstance(tags, Sequence):
        raise TypeError(f"{where}: the tags must be a list of str, got {tags!r}")
    tags = [_text(where, "each tag", t) for t in tags]
    if kind == MULTILINE:
        if not tags:
            raise ValueError(f"{where}: a Multiline chart needs at least one tag regex")
        for pattern in tags:
            _check_regex(where, pattern)
    elif len(tags) != 3:
        raise ValueError(f"{where}: a Margin chart takes [value_tag, lower_tag, upper_tag], "
                         f"got {len(tags)} tags")
    else:
        for tag in tags:
            check_tag(tag)
    return [kind, tags]


def _check_regex(where: str, pattern: str) -> None:
    """A tag regex must compile. The browser matches it (and refuses one that could
    backtrack); here a repeat count too large for ``re`` or nesting too deep for its parser
    must be a ValueError naming the chart, not an OverflowError or RecursionError (the
    reader checks logged layouts with this, and refuses only that layout)."""
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        raise ValueError(f"{where}: {shown!r} is not a valid regex: {exc}") from None


def check(tag: str, layout: Any) -> tuple[tuple[str, str], int]:
    """``writer.add("custom_scalars", ..., layout)``: a layout, checked and serialized now (a
    dict is mutable; the JSON is what gets written)."""
    text = json.dumps(normalize_layout(layout), ensure_ascii=False)
    check_text_size(tag, "layout", text)
    return ("layout", text), len(text)


def chart(main_tag: str, keys: Sequence[str]) -> tuple[tuple[str, str, tuple, tuple], int]:
    """The payload of the chart ``add_scalars(main_tag, {key: ...})`` draws."""
    keys = tuple(keys)
    series = tuple(f"{main_tag}/{key}" for key in keys)
    return ("chart", main_tag, series, keys), sum(map(len, series))


def encode(msg: Any, payload: tuple) -> None:
    if payload[0] == "layout":
        msg.layout_json = payload[1]
    else:
        _, main_tag, series, keys = payload
        msg.main_tag = main_tag
        msg.series.extend(series)
        msg.keys.extend(keys)
