"""What each dashboard view is sent, computed from a :class:`TraceModel` with numpy.

Times are microseconds on the trace's own clock (``ts`` as written in the file, less the
summary's ``base``: 0 but for times far from zero, see parse.time_base), so a client can
check any number against the trace; ``t0`` is the first event's start.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from visualdl.kinds.profile.model import PHASE_LABELS, PHASES, TraceModel

__all__ = ["overview", "operators", "kernels", "timeline", "memory", "event", "search",
           "compare", "span_window", "coverage"]

_P = {name: i for i, name in enumerate(PHASES)}
_KERNEL, _MEMCPY = _P["kernel"], _P["memcpy"]


def span_window(model: TraceModel, span: str | None) -> tuple[float | None, float | None]:
    """``span``: "all" (or None) or a ProfilerStep number -> its [start, end) window."""
    if span in (None, "", "all"):
        return None, None
    try:
        number = int(span)
    except ValueError:
        raise ValueError("span must be 'all' or a step number") from None
    for step in model.steps:
        if step.number == number:
            return step.ts, step.ts + step.dur
    raise LookupError(f"the trace has no step {number}")


def summary(model: TraceModel) -> dict[str, Any]:
    return {"events": int(model.complete.sum()), "t0": model.t0, "t1": model.t1,
            "base": model.base,
            "steps": [s.number for s in model.steps], "warnings": model.warnings,
            "source": model.source, "tracks": len(model.tracks),
            "has_gpu": bool(model.is_gpu.any()), "has_memory": bool(model.is_memory.any()),
            "distributed": isinstance(model.meta.get("distributedInfo"), dict)}


# -- overview ---------------------------------------------------------------------------
def overview(model: TraceModel) -> dict[str, Any]:
    """Per step, its wall time split into PHASES: each instant of the step goes to the
    innermost phase-marked span running on the step's thread (unmarked time: other), and
    while a GPU kernel (else a memcpy) runs, to that instead. The parts sum to the step."""
    cover_k = _coverage(model, model.is_kernel)
    cover_any = _coverage(model, model.is_gpu)
    nphase = len(PHASES)
    parts = np.zeros((len(model.steps), nphase))
    covered = np.zeros(len(model.steps))
    by_track: dict[int, list[int]] = {}
    for k, step in enumerate(model.steps):
        by_track.setdefault(step.track, []).append(k)
    for track, ks in by_track.items():  # all steps of a thread at once, with numpy
        ks_arr = np.array(ks)
        st = np.array([model.steps[k].ts for k in ks])
        en = st + np.array([model.steps[k].dur for k in ks])
        s, e, ev = model.segments(track)
        which = np.searchsorted(st, s, side="right") - 1  # the step a segment starts in
        ok = which >= 0
        which = np.maximum(which, 0)
        ok &= s < en[which]
        s, e, ev, which = s[ok], e[ok], ev[ok], which[ok]
        e = np.minimum(e, en[which])
        length = np.maximum(e - s, 0.0)
        k_time = cover_k(e) - cover_k(s)
        gpu = cover_any(e) - cover_any(s)
        host = np.maximum(length - gpu, 0.0)
        flat = np.bincount(which * nphase + model.phase[ev], weights=host,
                           minlength=len(ks) * nphase).reshape(len(ks), nphase)
        flat[:, _KERNEL] += np.bincount(which, weights=k_time, minlength=len(ks))
        flat[:, _MEMCPY] += np.bincount(which, weights=gpu - k_time, minlength=len(ks))
        parts[ks_arr] = flat
        covered[ks_arr] = np.bincount(which, weights=length, minlength=len(ks))
    rows = []
    for k, step in enumerate(model.steps):
        # time of the step no segment covers (none when the step is an event of its thread,
        # but keep the sum exact for odd traces)
        parts[k, _P["other"]] += max(step.dur - covered[k], 0.0)
        rows.append({"step": step.number, "ts": step.ts, "dur": step.dur,
                     "parts": dict(zip(PHASES, parts[k].tolist()))})
    totals = dict(zip(PHASES, parts.sum(axis=0).tolist())) if rows else \
        {p: 0.0 for p in PHASES}
    return {"phases": list(PHASES), "labels": PHASE_LABELS, "steps": rows, "totals": totals,
            "environment": environment(model), "summary": summary(model)}


def _coverage(model: TraceModel, mask: np.ndarray):
    """C(t): how much of (-inf, t] the union of the ``mask`` events covers."""
    return coverage(model.ts[mask], model.end[mask])


def coverage(starts: np.ndarray, ends: np.ndarray):
    """C(t): how much of (-inf, t] the union of the intervals [starts, ends) covers."""
    if not len(starts):
        return lambda t: np.zeros_like(np.asarray(t, np.float64))
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(len(starts), bool)
    new[1:] = starts[1:] > ends[:-1]
    group = np.cumsum(new) - 1
    u_start = starts[new]
    u_end = np.zeros(len(u_start))
    np.maximum.at(u_end, group, ends)
    before = np.concatenate(([0.0], np.cumsum(u_end - u_start)))

    def cover(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, np.float64)
        k = np.searchsorted(u_start, t, side="right") - 1
        kk = np.maximum(k, 0)
        inside = np.clip(t - u_start[kk], 0.0, u_end[kk] - u_start[kk])
        return np.where(k >= 0, before[kk] + inside, 0.0)

    return cover


#: Top-level keys whose dict describes the run's environment (vf.profiler writes
#: ``visualdl_env``; other tools ``env``, ``environment`` or ``metadata``).
_ENV_KEYS = ("visualdl_env", "env", "environment", "metadata")


def environment(model: TraceModel) -> dict[str, Any]:
    """The trace's own description of where it ran (whatever keys it has)."""
    env: dict[str, Any] = {}
    meta = model.meta
    for key, value in meta.items():
        if key in ("deviceProperties", "distributedInfo") + _ENV_KEYS:
            continue
        env[key] = value
    for key in _ENV_KEYS:
        if isinstance(meta.get(key), dict):
            env.update(meta[key])
    devices = meta.get("deviceProperties")
    threads = sorted({t["label"] for t in model.tracks if not t["gpu"] and t["events"]})
    return {"fields": {k: _plain(v) for k, v in env.items()},
            "devices": devices if isinstance(devices, list) else [],
            "threads": threads, "source": model.source}


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    import json
    return json.dumps(value)


# -- operator and kernel tables -----------------------------------------------------
def _step_time(model: TraceModel, start: float | None, end: float | None) -> float:
    inside = [s.dur for s in model.steps
              if (start is None or s.ts >= start) and (end is None or s.ts < end)]
    if inside:
        return float(sum(inside))
    lo = model.t0 if start is None else start
    hi = model.t1 if end is None else end
    return max(hi - lo, 0.0)


def _sums(model: TraceModel, inv: np.ndarray, times: np.ndarray, n: int) -> np.ndarray:
    """Per group, the sum of ``times``: in whole ticks at the trace's resolution where it
    has one (exact, so a row's self time is never a rounding above its total), else in
    floats in event order (each self time is at most its dur, and the sums keep that)."""
    scale = model.scale
    if not scale:
        return np.bincount(inv, weights=times, minlength=n)
    return np.bincount(inv, weights=np.rint(times * scale), minlength=n) / scale


def _table(model: TraceModel, mask: np.ndarray, by_shapes: bool, start, end) -> dict[str, Any]:
    idx = np.flatnonzero(mask)
    names = model.name[idx]
    if by_shapes:
        shapes = model.shape_ids()[idx]
        keys = names.astype(np.int64) * (len(model.shape_names) + 1) + shapes
    else:
        keys = names.astype(np.int64)
    uniq, inv = np.unique(keys, return_inverse=True)
    calls = np.bincount(inv, minlength=len(uniq))
    total = _sums(model, inv, model.dur[idx], len(uniq))
    self_t = np.minimum(_sums(model, inv, model.self_time[idx], len(uniq)), total)
    mx = np.zeros(len(uniq))
    np.maximum.at(mx, inv, model.dur[idx])
    mn = np.full(len(uniq), np.inf)
    np.minimum.at(mn, inv, model.dur[idx])
    step_time = _step_time(model, start, end)
    rows = []
    for k, key in enumerate(uniq):
        if by_shapes:
            name_id, shape_id = divmod(int(key), len(model.shape_names) + 1)
            shapes = model.shape_names[shape_id]
        else:
            name_id, shapes = int(key), None
        row = {"name": model.names[name_id], "calls": int(calls[k]),
               "total": float(total[k]), "self": float(self_t[k]),
               "mean": float(total[k] / calls[k]), "min": float(mn[k]), "max": float(mx[k]),
               "self_share": float(self_t[k] / step_time) if step_time else 0.0,
               "total_share": float(total[k] / step_time) if step_time else 0.0}
        if by_shapes:
            row["shapes"] = shapes
        rows.append(row)
    rows.sort(key=lambda r: (-r["self"], r["name"]))
    return {"rows": rows, "step_time": step_time, "events": int(len(idx)),
            "group": "shapes" if by_shapes else "name"}


def operators(model: TraceModel, span: str | None = None, group: str = "name") -> dict[str, Any]:
    """Calls, total and self time, mean, min, max and share of step time per operator
    (``group="shapes"``: per operator and input shapes)."""
    start, end = span_window(model, span)
    table = _table(model, model.is_op & model.window_mask(start, end), group == "shapes",
                   start, end)
    table["span"] = span or "all"
    return table


def kernels(model: TraceModel, span: str | None = None) -> dict[str, Any]:
    """The same table for GPU kernels (empty without GPU data)."""
    start, end = span_window(model, span)
    table = _table(model, model.is_kernel & model.window_mask(start, end), False, start, end)
    table["span"] = span or "all"
    return table


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two operator tables joined by name (and shapes): both sides and b - a."""
    def key(r):
        return (r["name"], r.get("shapes"))
    left = {key(r): r for r in a["rows"]}
    right = {key(r): r for r in b["rows"]}
    rows = []
    for k in sorted(set(left) | set(right), key=lambda k: (k[0], str(k[1]))):
        ra, rb = left.get(k), right.get(k)
        row = {"name": k[0], "a": ra, "b": rb}
        if k[1] is not None:
            row["shapes"] = k[1]
        for field in ("calls", "total", "self", "mean"):
            row[f"diff_{field}"] = (rb[field] if rb else 0) - (ra[field] if ra else 0)
        rows.append(row)
    rows.sort(key=lambda r: -abs(r["diff_self"]))
    return {"rows": rows, "step_time": {"a": a["step_time"], "b": b["step_time"]}}


# -- timeline -----------------------------------------------------------------------
def timeline(model: TraceModel, start: float | None, end: float | None, width: int,
             max_events: int = 60_000) -> dict[str, Any]:
    """The complete events overlapping [start, end] at ``width`` pixels: an event at least
    a pixel long is sent as it is; shorter ones are merged per thread, depth and pixel
    column into one block (``count`` > 1, ``id`` -1)."""
    lo = model.t0 if start is None else start
    hi = model.t1 if end is None else end
    if hi <= lo:
        hi = lo + 1.0
    px = (hi - lo) / width
    mask = model.complete & (model.ts < hi) & (model.end > lo)
    # zero-length events at the window's start belong to it too
    mask |= model.complete & (model.dur == 0) & (model.ts == lo)
    idx = np.flatnonzero(mask)
    big = model.dur[idx] >= px
    keep = idx[big]
    small = idx[~big]
    m_ts = m_dur = m_track = m_depth = m_name = m_cat = m_count = np.zeros(0)
    if len(small):
        col = np.clip(((model.ts[small] - lo) / px).astype(np.int64), -1, width + 1)
        dmax = int(model.depth[small].max()) + 1
        key = (model.track[small].astype(np.int64) * dmax + model.depth[small]) * (width + 3) + \
            col + 1
        order = np.argsort(key, kind="stable")
        key_sorted = key[order]
        first = np.ones(len(order), bool)
        first[1:] = key_sorted[1:] != key_sorted[:-1]
        starts = np.flatnonzero(first)
        members = small[order]
        m_ts = np.minimum.reduceat(model.ts[members], starts)
        m_end = np.maximum.reduceat(model.end[members], starts)
        m_count = np.diff(np.append(starts, len(order)))
        m_dur = m_end - m_ts
        head = members[starts]  # its first member's name and category label the block
        m_track, m_depth = model.track[head], model.depth[head]
        m_name, m_cat = model.name[head], model.cat[head]
    n_big = len(keep)
    ts = np.concatenate([model.ts[keep], m_ts])
    dur = np.concatenate([model.dur[keep], m_dur])
    track = np.concatenate([model.track[keep], m_track]).astype(np.int64)
    depth = np.concatenate([model.depth[keep], m_depth]).astype(np.int64)
    name = np.concatenate([model.name[keep], m_name]).astype(np.int64)
    cat = np.concatenate([model.cat[keep], m_cat]).astype(np.int64)
    ids = np.concatenate([keep, np.full(len(m_ts), -1)]).astype(np.int64)
    count = np.concatenate([np.ones(n_big, np.int64), np.asarray(m_count, np.int64)])
    truncated = False
    if len(ts) > max_events:  # only with thousands of threads: keep the longest
        top = np.argsort(-dur, kind="stable")[:max_events]
        top.sort()
        ts, dur, track, depth, name, cat, ids, count = (
            a[top] for a in (ts, dur, track, depth, name, cat, ids, count))
        truncated = True
    used = np.unique(name)
    return {
        "start": lo, "end": hi, "width": width, "pixel": px, "t0": model.t0, "t1": model.t1,
        "tracks": model.tracks, "truncated": truncated,
        "names": {str(int(i)): model.names[int(i)] for i in used},
        "cats": model.cats,
        "events": {"ts": ts.tolist(), "dur": dur.tolist(), "track": track.tolist(),
                   "depth": depth.tolist(), "name": name.tolist(), "cat": cat.tolist(),
                   "id": ids.tolist(), "count": count.tolist()},
    }


def event(model: TraceModel, index: int) -> dict[str, Any]:
    """One event's details (the ``id`` the timeline sent)."""
    if not 0 <= index < model.n or not model.complete[index]:
        raise LookupError(f"no event {index}")
    track = model.tracks[int(model.track[index])]
    parent = int(model.parent[index])
    return {"id": index, "name": model.names[int(model.name[index])],
            "cat": model.cats[int(model.cat[index])], "ts": float(model.ts[index]),
            "dur": float(model.dur[index]), "self": float(model.self_time[index]),
            "depth": int(model.depth[index]), "track": track["id"],
            "track_label": track["label"], "pid": track["pid"], "tid": track["tid"],
            "phase": PHASES[int(model.phase[index])],
            "parent": model.names[int(model.name[parent])] if parent >= 0 else None,
            "args": model.args(index)}


def search(model: TraceModel, query: str, limit: int = 200) -> dict[str, Any]:
    """Events whose name contains ``query`` (case-insensitive), in time order."""
    q = query.lower()
    hits = np.array([i for i, n in enumerate(model.names) if q in n.lower()], np.int64)
    if not len(hits):
        return {"query": query, "total": 0, "events": []}
    idx = np.flatnonzero(model.complete & np.isin(model.name, hits))
    idx = idx[np.argsort(model.ts[idx], kind="stable")]
    return {"query": query, "total": int(len(idx)), "events": [
        {"id": int(i), "name": model.names[int(model.name[i])], "ts": float(model.ts[i]),
         "dur": float(model.dur[i]), "track": int(model.track[i])} for i in idx[:limit]]}


# -- memory ---------------------------------------------------------------------------
def memory(model: TraceModel, points: int = 2000, top: int = 20) -> dict[str, Any]:
    """Allocated bytes over time per device (each device's peaks kept when thinned), the
    peak, and the operators that allocated most."""
    mem = model.memory_events
    devices = []
    for d, label in enumerate(mem["labels"]):
        sel = mem["device"] == d
        if not sel.any():
            continue
        ts = model.ts[mem["index"][sel]]
        total = mem["total"][sel]
        if np.isnan(total).any():  # no running total written: add up the deltas
            total = np.cumsum(mem["bytes"][sel])
        peak_at = int(np.argmax(total))
        kept = _thin(total, points)
        devices.append({"device": str(label), "ts": ts[kept].tolist(),
                        "allocated": total[kept].tolist(), "peak": float(total[peak_at]),
                        "peak_ts": float(ts[peak_at]), "events": int(sel.sum())})
    allocs = mem["bytes"] > 0
    ops = []
    if allocs.any():
        owners = model.enclosing_op(mem["index"][allocs])
        amounts = mem["bytes"][allocs]
        has = owners >= 0
        names = model.name[owners[has]]
        uniq, inv = np.unique(names, return_inverse=True)
        total = np.bincount(inv, weights=amounts[has], minlength=len(uniq))
        count = np.bincount(inv, minlength=len(uniq))
        order = np.argsort(-total, kind="stable")[:top]
        ops = [{"name": model.names[int(uniq[k])], "bytes": float(total[k]),
                "allocations": int(count[k])} for k in order]
        if (~has).any():
            ops.append({"name": "(outside any operator)", "bytes": float(amounts[~has].sum()),
                        "allocations": int((~has).sum())})
    return {"devices": devices, "top_ops": ops, "t0": model.t0}


def _thin(values: np.ndarray, points: int) -> np.ndarray:
    """At most about ``points`` indexes: each bucket's min and max, first and last."""
    n = len(values)
    if n <= points:
        return np.arange(n)
    buckets = np.linspace(0, n, points // 2 + 1).astype(np.int64)
    keep = {0, n - 1}
    for a, b in zip(buckets[:-1], buckets[1:]):
        if b > a:
            chunk = values[a:b]
            keep.add(a + int(np.argmax(chunk)))
            keep.add(a + int(np.argmin(chunk)))
    return np.array(sorted(keep))
