"""Gathering a report's data from a log source: the chosen scalars, min/max downsampled (so
spikes survive) within a point budget shared by every series; the run table (configs and
hyper-parameters); media at the chosen step (as data URIs, within a byte budget); the last
histogram of each tag; text; the graph of a model as a list of its operators.

``data`` is anything with ``runs()``, ``tags(run)``, ``scalars(run, tag)``,
``events(run, kind, tag)``, ``hparams(run)`` and ``load(ref)`` or ``load_blob(ref)``: a
``LogReader`` or a server's data provider. Every value comes out JSON-ready.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from visualdl.kinds.config.merge import run_config
from visualdl.kinds.scalar import order
from visualdl.series.downsample import MIN_POINTS, minmax_indices
from visualdl.report.charts import chart_specs, layouts_of
from visualdl.report.grouped import grouped_chart, parse_group
from visualdl.report.onnx_nodes import onnx_nodes
from visualdl.report.select import Selection, resolve

__all__ = ["Budget", "collect", "encode_array", "decode_array"]


@dataclass(frozen=True)
class Budget:
    """``points``: scalar points kept over all series; ``series_points``: at most this many
    per series; ``series``: at most this many series (the first charts' in page order); ``media_bytes``: media kept in all; ``item_bytes``: the largest media item
    kept (a larger one is listed in the footer as left out)."""

    points: int = 300_000
    series_points: int = 2_000
    media_bytes: int = 2_000_000
    item_bytes: int = 300_000
    graph_nodes: int = 2_000
    series: int = 5_000
    table_columns: int = 60


@dataclass
class _Media:
    left: int
    item_bytes: int
    left_out: list[str] = field(default_factory=list)


def encode_array(values: np.ndarray) -> dict:
    """A numeric column as base64 of its little-endian bytes: int32 steps when they fit,
    float32 values when they keep 7 significant digits' worth (no overflow), else 64-bit."""
    if values.dtype.kind in "iu":
        fits = values.size == 0 or (values.min() >= -2**31 and values.max() < 2**31)
        dtype = "<i4" if fits else "<f8"
    else:
        finite = values[np.isfinite(values)]
        dtype = "<f4" if finite.size == 0 or np.abs(finite).max() < 3e38 else "<f8"
    raw = np.ascontiguousarray(values, dtype=dtype).tobytes()
    return {"t": dtype[1:], "b": base64.b64encode(raw).decode("ascii")}


def decode_array(column: dict) -> np.ndarray:
    """The inverse of :func:`encode_array` (tests and tools read reports with it)."""
    return np.frombuffer(base64.b64decode(column["b"]), dtype="<" + column["t"])


def _loader(data: Any) -> Callable[[Any], Any]:
    return getattr(data, "load_blob", None) or data.load


def _series(data: Any, run: str, tag: str, run_index: int, per_series: int) -> dict:
    series = data.scalars(run, tag)
    idx = minmax_indices(np.asarray(series.values, dtype=np.float64), per_series)
    steps, values = np.asarray(series.steps)[idx], np.asarray(series.values)[idx]
    return {"run": run_index, "tag": tag, "total": int(len(series.values)),
            "kept": int(len(idx)), "x": encode_array(steps.astype(np.int64)),
            "y": encode_array(values.astype(np.float64))}


def _scalar_charts(data: Any, runs: list[str], tags_of: dict[str, set[str]], tags: list[str],
                   budget: Budget, left_out: list[str], sel: Selection) -> dict:
    """Every series drawn is stored once (a tag may be in a layout chart and alone); the
    charts refer to them by index, with the label of each line. With a run grouping, the
    per-tag charts hold their groups' lines instead."""
    page = order.order(order.last_updates(data, runs))
    rank = {s["name"]: i for i, s in enumerate(page["sections"])}
    specs = chart_specs(layouts_of(data), runs, tags_of, tags, left_out, rank)
    grouping = parse_group(sel.group, sel.gstat, sel.gband)
    grouped = {c["tag"] for _, charts in specs for c in charts if "tag" in c} \
        if grouping is not None else set()
    wanted = list(dict.fromkeys((run, tag) for _, charts in specs for chart in charts
                                if chart.get("tag") not in grouped
                                for run, tag, _ in chart["lines"]))
    if len(wanted) > budget.series:
        left_out.append(f"{len(wanted) - budget.series:,} scalar series past the first "
                        f"{budget.series:,}")
        wanted = wanted[:budget.series]
    per_series = max(MIN_POINTS, min(budget.series_points,
                                     budget.points // max(1, len(wanted))))
    series = [_series(data, run, tag, runs.index(run), per_series) for run, tag in wanted]
    index = {pair: i for i, pair in enumerate(wanted)}
    kept, total = sum(s["kept"] for s in series), sum(s["total"] for s in series)
    sections = []
    for name, charts in specs:
        out = []
        for c in charts:
            chart = {"title": c["title"], "tag": c.get("tag", c["title"]), "lines": []}
            if "tag" in c and c["tag"] in grouped:
                chart["groups"], k, t = grouped_chart(
                    data, runs, chart["tag"], grouping, sel.smoothing, sel.gstat, sel.gband,
                    per_series, encode_array)
                kept, total = kept + k, total + t
            else:
                chart["lines"] = [[index[run, tag], label] for run, tag, label in c["lines"]
                                  if (run, tag) in index]
                if not chart["lines"]:
                    continue
            out.append(chart)
        if out:
            sections.append({"name": name or "Ungrouped", "charts": out})
    return {"series": series, "sections": sections,
            "points": {"kept": kept, "total": total, "per_series": per_series}}


def _table(data: Any, runs: list[str], budget: Budget) -> dict:
    configs = {}
    for run in runs:
        try:
            configs[run] = run_config(data, run).flat
        except KeyError:
            configs[run] = {}
    columns = sorted({k for flat in configs.values() for k in flat})
    dropped = max(0, len(columns) - budget.table_columns)
    columns = columns[:budget.table_columns]
    rows = [[run] + [_cell(configs[run].get(c)) for c in columns] for run in runs]
    return {"columns": ["run"] + columns, "rows": rows, "dropped_columns": dropped}


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if np.isfinite(value) else str(value)
    return str(value)


def _at_step(refs: list, step: int | None) -> Any:
    if not refs:
        return None
    if step is None:
        return max(refs, key=lambda r: (r.step, r.wall_time))
    before = [r for r in refs if r.step <= step]
    return max(before, key=lambda r: (r.step, r.wall_time)) if before else None


def _data_uri(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def _media_item(kind: str, msg: Any) -> tuple[str, bytes, dict]:
    if kind == "image":
        return "image/png", bytes(msg.png), {"w": msg.width, "h": msg.height}
    if kind == "audio":
        return "audio/wav", bytes(msg.wav), {"rate": msg.sample_rate}
    return (msg.mime or "video/mp4"), bytes(msg.data), {"w": msg.width, "h": msg.height}


def _media(data: Any, runs: list[str], tags: set[str], sel: Selection, media: _Media,
           kind: str) -> list[dict]:
    load = _loader(data)
    out = []
    for run in runs:
        for tag in sorted(set(data.tags(run).get(kind, ())) & tags):
            ref = _at_step(list(data.events(run, kind, tag)), sel.step)
            if ref is None:
                continue
            where = f"{kind} {run}/{tag} step {ref.step}"
            if ref.size > media.left or ref.size > media.item_bytes:
                media.left_out.append(f"{where} ({ref.size:,} bytes)")
                continue
            try:
                mime, raw, meta = _media_item(kind, load(ref))
            except (ValueError, OSError) as err:
                media.left_out.append(f"{where} (unreadable: {err})")
                continue
            media.left -= len(raw)
            out.append({"run": run, "tag": tag, "step": int(ref.step),
                        "src": _data_uri(mime, raw), **meta})
    return out


def _histograms(data: Any, runs: list[str], tags: set[str]) -> list[dict]:
    charts: dict[str, list] = {}
    for run in runs:
        for tag in sorted(set(data.tags(run).get("histogram", ())) & tags):
            events = list(data.events(run, "histogram", tag))
            if not events:
                continue
            last = max(events, key=lambda e: (e.step, e.wall_time))
            edges = np.asarray(last.edges, dtype=np.float64)
            charts.setdefault(tag, []).append({
                "run": runs.index(run), "step": int(last.step),
                "x": ((edges[:-1] + edges[1:]) / 2).tolist(),
                "y": np.asarray(last.counts, dtype=np.float64).tolist()})
    return [{"tag": tag, "series": series} for tag, series in sorted(charts.items())]


def _texts(data: Any, runs: list[str], tags: set[str]) -> list[dict]:
    from visualdl.kinds.text.api import render_markdown  # markdown-it, sanitized by nh3

    out = []
    for run in runs:
        for tag in sorted(set(data.tags(run).get("text", ())) & tags):
            events = list(data.events(run, "text", tag))
            if events:
                last = max(events, key=lambda e: (e.step, e.wall_time))
                out.append({"run": run, "tag": tag, "step": int(last.step),
                            "count": len(events), "html": render_markdown(last.text)})
    return out


def _graphs(data: Any, runs: list[str], budget: Budget, media: _Media) -> list[dict]:
    load = _loader(data)
    out = []
    for run in runs:
        for tag in sorted(data.tags(run).get("graph", ())):
            ref = _at_step(list(data.events(run, "graph", tag)), None)
            if ref is None:
                continue
            try:
                nodes = onnx_nodes(bytes(load(ref).onnx))
            except Exception as err:  # noqa: BLE001 - any undecodable model is skipped, said
                media.left_out.append(f"graph {run}/{tag} (unreadable: {err})")
                continue
            out.append({"run": run, "tag": tag, "total": len(nodes),
                        "nodes": nodes[:budget.graph_nodes]})
    return out


def collect(data: Any, selection: Selection, budget: Budget = Budget()) -> dict:
    """The report's data (JSON-ready); ``ReportError`` for an empty logdir or a selection
    that names unknown runs or tags."""
    all_runs = list(data.runs())
    tags_of = {run: [t for tags in data.tags(run).values() for t in tags] for run in all_runs}
    runs, tags = resolve(selection, all_runs, tags_of)
    chosen = set(tags)
    scalar_of = {run: set(data.tags(run).get("scalar", ())) for run in runs}
    scalar_tags = [t for t in tags if any(t in scalar_of[r] for r in runs)]
    media = _Media(left=budget.media_bytes, item_bytes=budget.item_bytes)
    out = {
        "runs": runs,
        "smoothing": selection.smoothing,
        "logy": selection.logy,
        "scalars": _scalar_charts(data, runs, scalar_of, scalar_tags, budget, media.left_out,
                                  selection),
        "table": _table(data, runs, budget),
        "images": _media(data, runs, chosen, selection, media, "image"),
        "audio": _media(data, runs, chosen, selection, media, "audio"),
        "video": _media(data, runs, chosen, selection, media, "video"),
        "histograms": _histograms(data, runs, chosen),
        "texts": _texts(data, runs, chosen),
    }
    out["graphs"] = _graphs(data, runs, budget, media)
    out["left_out"] = media.left_out
    out["notes"] = [] if not any("groups" in c for s in out["scalars"]["sections"]
                                 for c in s["charts"]) else [
        f"Runs grouped by {selection.group[3:]!r} ({selection.gstat}, band {selection.gband}),"
        f" computed at smoothing {selection.smoothing:g}: the smoothing slider and the run"
        f" checkboxes leave the group lines as they are."]
    return out
