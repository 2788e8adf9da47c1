"""What a box shows and how big it is.

The server decides both the text lines of every box and its size, so the layout and the
drawing agree without the browser measuring text: boxes are drawn in a monospace font whose
advance width is a fixed fraction of its size.
"""

from __future__ import annotations

from typing import NamedTuple

from visualdl.kinds.graph.hierarchy import Group
from visualdl.kinds.graph.parsed_model import GraphModel, Node
from visualdl.kinds.graph.tensor_values import format_shape

__all__ = ["GROUP_HEADER", "GROUP_PAD", "Box", "Options", "group_box", "node_box"]

CHAR_W_TITLE = 7.2  # 12 px monospace, bold
CHAR_W_TEXT = 6.0  # 10 px monospace
TITLE_H = 18.0
LINE_H = 13.0
PAD_X = 8.0
PAD_Y = 5.0
MIN_W = 56.0
MAX_CHARS = 36
MAX_ATTRS = 8
MAX_INITS = 8
GROUP_PAD = 14.0
GROUP_HEADER = 22.0


class Options(NamedTuple):
    """Display options that change box sizes, hence the layout (part of the cache keys:
    a tuple, hashed in C, since "expand all" looks up 300,000 keys holding it)."""

    direction: str = "TB"  # "TB" (vertical) or "LR" (horizontal)
    attrs: bool = False
    inits: bool = False


class Box(NamedTuple):
    """The drawn content of one box and its size in pixels (a tuple: 100,000 are made for
    a big model, each made in less than half the time of a frozen dataclass)."""

    title: str
    subtitle: str
    lines: tuple[tuple[str, str], ...]
    width: float
    height: float


def _cut(text: str, n: int = MAX_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _size(title: str, subtitle: str, lines: tuple[tuple[str, str], ...]) -> tuple[float, float]:
    width = len(title) * CHAR_W_TITLE
    height = PAD_Y * 2 + TITLE_H
    if subtitle:
        width = max(width, len(subtitle) * CHAR_W_TEXT)
        height += LINE_H
    for key, value in lines:
        width = max(width, (len(key) + len(value) + 3) * CHAR_W_TEXT)
        height += LINE_H
    return max(MIN_W, round(width + 2 * PAD_X)), round(height)


def node_box(model: GraphModel, node: Node, options: Options) -> Box:
    """Title (op type or tensor name), subtitle (short name or shape) and detail lines."""
    if node.role != "op":
        info = model.tensor(node.scope, node.name)
        title = _cut(node.name or node.op_type)
        subtitle = _cut(format_shape(info.shape) if info else "")
        lines: tuple[tuple[str, str], ...] = ()
        if info and info.dtype and options.attrs:
            lines = (("dtype", info.dtype),)
        return Box(title, subtitle, lines, *_size(title, subtitle, lines))
    title = _cut(node.op_type)
    subtitle = _cut(node.label) if node.label and node.label != node.op_type else ""
    out: list[tuple[str, str]] = []
    if options.inits:
        out.extend(_init_lines(model, node))
    if options.attrs:
        shown = node.attributes[:MAX_ATTRS]
        out.extend((_cut(name, 16), _cut(value, 24)) for name, _, value in shown)
        if len(node.attributes) > MAX_ATTRS:
            out.append(("…", f"{len(node.attributes) - MAX_ATTRS} more"))
    lines = tuple(out)
    return Box(title, subtitle, lines, *_size(title, subtitle, lines))


def _init_lines(model: GraphModel, node: Node) -> list[tuple[str, str]]:
    out = []
    for name in node.inputs:
        init = model.initializer(node.scope, name) if name else None
        if init is not None:
            out.append((_cut(name, 20), "⟨" + (format_shape(init.summary["shape"]) or "[]") + "⟩"))
            if len(out) >= MAX_INITS:
                break
    return out


def group_box(group: Group) -> Box:
    """A collapsed group: its name and how many ops it hides."""
    title = _cut(group.label)
    subtitle = f"{group.ops} op{'s' if group.ops != 1 else ''}"
    return Box(title, subtitle, (), *_size(title, subtitle, ()))
