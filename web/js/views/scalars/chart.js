// Pure functions that turn scalar series into plotly traces and layout: smoothing, x-axis
// modes, outlier-robust y range and markers for non-finite values. No DOM, no fetching.
import { plotlyText, baseLayout, axis } from '../../shared/plot.js';
import { withAlpha } from '../../shared/tint.js';
import { smoothHeld, smoothingActive, smoothingKey } from './smoothmodes.js';
import { envelopeTraces, nanMarks } from './marks.js';

/**
 * Debiased exponential moving average, as TensorBoard computes it: non-finite points pass
 * through unsmoothed and do not count towards the debiasing.
 */
export function smooth(values, weight) {
  const out = new Float64Array(values.length);
  if (!(weight > 0)) {
    out.set(values);
    return out;
  }
  let last = 0;
  let n = 0;
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    if (!Number.isFinite(v)) {
      out[i] = v;
    } else {
      last = last * weight + (1 - weight) * v;
      n += 1;
      out[i] = weight === 1 ? last : last / (1 - weight ** n);
    }
  }
  return out;
}

const UNITS = [
  { limit: 120, div: 1, label: 's' },
  { limit: 7200, div: 60, label: 'min' },
  { limit: Infinity, div: 3600, label: 'h' },
];

/** The unit for a relative-time axis spanning `seconds`. */
export function relativeUnit(seconds) {
  return UNITS.find((u) => seconds < u.limit);
}

/** Seconds from a series' start to its last point: a zoomed window's series carries its
 *  full series' `span` (and `start`), so the relative axis keeps its origin and unit. */
function spanOf(series) {
  if (Number.isFinite(series.span)) return series.span;
  const last = series.wall.length ? series.wall[series.wall.length - 1] : 0;
  return Number.isFinite(series.start) ? last - series.start : 0;
}

/**
 * The x axis of a chart of `lines` in `mode`: the relative axis' unit and the axis'
 * `uirevision`, which changes whenever a range on the axis would mean something else (a
 * zoom window is kept while it stays the same, and dropped with the user's range when not).
 */
export function xAxisOf(lines, mode) {
  const unit = relativeUnit(Math.max(0, ...lines.map(({ series }) => spanOf(series))));
  return { unit, revision: mode === 'relative' ? `relative|${unit.label}` : mode };
}

/** x values of one series for the axis mode ('step' | 'relative' | 'wall'). */
function xValues(series, mode, unit) {
  if (mode === 'step') return Array.from(series.steps);
  if (mode === 'wall') return Array.from(series.wall, (t) => new Date(t * 1000));
  const start = Number.isFinite(series.start) ? series.start : 0;
  return Array.from(series.wall, (t) => (t - start) / unit.div);
}

function finiteOrNull(arr) {
  return Array.from(arr, (v) => (Number.isFinite(v) ? v : null));
}

/** Quantile of a sorted array (linear interpolation). */
function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// A series whose values span less than this, relative to their magnitude, is flat: what
// varies is rounding (of the smoothing, of float32 storage), not the data.
const FLAT = 1e-9;
// A flat series' axis: its value +-10% (+-1 around 0); plotly's autorange would zoom into
// the rounding noise (a square wave), or put the value on a -1..1 axis.
const FLAT_PAD = 0.1;

/** Whether linear values from `lo` to `hi` are one value up to rounding. */
function isFlat(lo, hi) {
  return hi - lo <= FLAT * Math.max(Math.abs(lo), Math.abs(hi));
}

/** The y range of a flat series between `lo` and `hi` (linear values; log10 on a log axis). */
function flatRange(lo, hi, logScale) {
  const c = lo + (hi - lo) / 2;
  const pad = Math.abs(c) * FLAT_PAD || 1;
  const range = [c - pad, c + pad];
  return logScale ? range.map(Math.log10) : range;
}

/** The y range of the finite values (positive ones on a log axis) when they are flat, else
 *  null (plotly's autorange then). */
export function flatYRange(valueArrays, logScale) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const values of valueArrays) {
    for (const v of values) {
      if (v === null || !Number.isFinite(v) || (logScale && !(v > 0))) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  return lo <= hi && isFlat(lo, hi) ? flatRange(lo, hi, logScale) : null;
}

/** y range that ignores the outer 5% on each side (TensorBoard's "ignore outliers"). */
export function robustRange(valueArrays, logScale) {
  const all = [];
  for (const values of valueArrays) {
    for (const v of values) {
      if (Number.isFinite(v) && (!logScale || v > 0)) all.push(logScale ? Math.log10(v) : v);
    }
  }
  if (all.length < 2) return null;
  all.sort((a, b) => a - b);
  const lo = quantile(all, 0.05);
  const hi = quantile(all, 0.95);
  if (logScale ? isFlat(10 ** lo, 10 ** hi) : isFlat(lo, hi)) {
    return logScale ? flatRange(10 ** lo, 10 ** hi, true) : flatRange(lo, hi, false);
  }
  const pad = (hi - lo) * 0.1;
  return [lo - pad, hi + pad];
}

// Lines of one run in a combined chart are told apart by dash, then by marker as well.
export const DASHES = ['solid', 'dash', 'dot', 'dashdot', 'longdash', 'longdashdot'];
const MARKERS = ['circle', 'square', 'diamond', 'triangle-up', 'x', 'cross'];

/** The line style of the `index`-th key of a combined chart. */
export function lineStyle(index) {
  const dash = DASHES[index % DASHES.length];
  const round = Math.floor(index / DASHES.length);
  return round ? { dash, marker: MARKERS[(round - 1) % MARKERS.length] } : { dash };
}

function styled(line, color, width) {
  const out = { color, width };
  if (line.style && line.style.dash !== 'solid') out.dash = line.style.dash;
  return out;
}

function markerOf(line, color) {
  return line.style && line.style.marker ? { symbol: line.style.marker, size: 5, color, maxdisplayed: 12 } : undefined;
}

/**
 * Build {traces, layout, nonFinite} for one chart: a single tag over runs, or a combined
 * chart (several tags per run), with the same smoothing, axes, outlier clipping and tooltip.
 * lines: [{run, color, series: {steps, wall, values, total, downsampled, start},
 *          tag?, name? (legend and tooltip name; the run by default), style? ({dash, marker})}]
 * opts: {smoothing, xMode, logY, ignoreOutliers, tipOrder, uirevision, yRevision? (the y
 *        axis' own uirevision), legend? (show the legend: combined charts),
 *        bands? ([{run, color, name, lower, upper}]), marks? ({shapes, annotations} drawn
 *        over the chart: a data-parallel run's restarts, ranks.js)}
 * A series may carry `smoothed` (with `smoothing`: its weight) and `span` (see spanOf).
 * Returns the relative axis' `unit` and the x axis' `xRevision` too.
 */
export function buildChart(lines, opts) {
  const traces = [];
  const shapes = [];
  const nonFinite = [];
  const bands = opts.bands || [];
  const { unit, revision } = xAxisOf(lines, opts.xMode);
  const smoothing = opts.smoothing;
  // the mode's parameters ({smoothing} alone: the EMA, as callers before modes said)
  const query = opts.smoothQuery || (smoothing > 0 ? { smoothing } : {});
  const smoothed = smoothingActive(query);
  // Margin bands first: each is its lower edge and then its upper edge filled down to it.
  for (const band of bands) {
    const name = plotlyText(band.name || band.run);
    const fill = withAlpha(band.color, 0.18);
    for (const [role, series] of [['lower', band.lower], ['upper', band.upper]]) {
      traces.push({
        type: 'scatter',
        mode: 'lines',
        x: xValues(series, opts.xMode, unit),
        y: finiteOrNull(series.values),
        name: `${name} (${role})`,
        line: { color: band.color, width: 0 },
        fill: role === 'upper' ? 'tonexty' : 'none',
        fillcolor: fill,
        showlegend: false,
        hovertemplate: `%{fullData.name}: %{y:.6g}<extra></extra>`,
        meta: { run: band.run, role, tag: band.tags[role] },
      });
    }
  }
  for (const line of lines) {
    const { run, color, series } = line;
    const x = xValues(series, opts.xMode, unit);
    const name = plotlyText(line.name ?? run);
    const raw = finiteOrNull(series.values);
    const bad = [];
    series.values.forEach((v, i) => {
      if (!Number.isFinite(v)) bad.push(i);
    });
    if (bad.length) nonFinite.push({ run: line.name ?? run, count: bad.length });
    for (const i of bad.slice(0, 100)) {
      shapes.push({
        type: 'line',
        xref: 'x',
        yref: 'paper',
        x0: x[i],
        x1: x[i],
        y0: 0,
        y1: 1,
        line: { color, width: 1, dash: 'dot' },
      });
    }
    // The run name comes from fullData, never pasted into the template: a run called
    // "%{y}" must not be interpreted.
    const fmt = '%{fullData.name}: %{y:.6g}';
    const marker = markerOf(line, color);
    // plotly reads `marker` whenever the key is there: leave it out for plain lines. A
    // series of one point draws no line: it is a dot (an epoch metric after one epoch).
    const markers = marker ? { mode: 'lines+markers', marker }
      : x.length === 1 ? { mode: 'markers', marker: { color, size: 7 } } : { mode: 'lines' };
    const meta = { run, tag: line.tag, line: line.name ?? run };
    if (query.envelope) traces.push(...envelopeTraces(series, x, color, name, meta));
    if (smoothed) {
      traces.push({
        type: 'scatter',
        mode: 'lines',
        x,
        y: raw,
        name,
        line: styled(line, color, 1),
        opacity: 0.25,
        hoverinfo: 'skip',
        showlegend: false,
        meta: { ...meta, role: 'raw' },
      });
      traces.push({
        type: 'scatter',
        ...markers,
        x,
        y: finiteOrNull(smoothedOf(series, query)),
        customdata: raw,
        name,
        line: styled(line, color, 1.6),
        hovertemplate: `${fmt} (raw %{customdata:.6g})<extra></extra>`,
        meta: { ...meta, role: 'smoothed' },
      });
    } else {
      traces.push({
        type: 'scatter',
        ...markers,
        x,
        y: raw,
        name,
        line: styled(line, color, 1.6),
        hovertemplate: `${fmt}<extra></extra>`,
        meta: { ...meta, role: 'raw' },
      });
    }
  }
  const xTitle = {
    step: 'step',
    relative: `relative time (${unit.label})`,
    wall: 'wall time',
  }[opts.xMode];
  const yaxis = axis({ type: opts.logY ? 'log' : 'linear', exponentformat: 'power' });
  const valueArrays = lines.map((r) => r.series.values);
  for (const band of bands) valueArrays.push(band.lower.values, band.upper.values);
  // (a flat series' range is of what is drawn: its smoothed line, bands and envelope too)
  const range = opts.ignoreOutliers ? robustRange(valueArrays, opts.logY)
    : flatYRange(traces.map((t) => t.y), opts.logY);
  if (range) {
    yaxis.range = range;
    yaxis.autorange = false;
  } else {
    yaxis.autorange = true;
  }
  const extra = opts.legend
    ? { showlegend: true, legend: { orientation: 'h', x: 0, y: -0.22, yanchor: 'top', font: { size: 10 } } }
    : {};
  const layout = baseLayout({
    xaxis: axis({
      type: opts.xMode === 'wall' ? 'date' : 'linear',
      title: { text: xTitle, standoff: 4 },
      uirevision: revision,
    }),
    yaxis,
    shapes,
    hovermode: 'x unified',
    hoversort: opts.tipOrder || 'trace', // plotly.js >= 3.6
    uirevision: opts.uirevision,
    ...extra,
  });
  const marks = nanMarks(lines, opts.nanMarks || [], (line) => xValues(line.series, opts.xMode, unit));
  for (const more of [marks, opts.marks]) {
    if (!more || !more.shapes.length) continue;
    layout.shapes = [...layout.shapes, ...more.shapes];
    layout.annotations = [...(layout.annotations || []), ...more.annotations];
  }
  if (opts.yRevision !== undefined) layout.yaxis.uirevision = opts.yRevision;
  return { traces, layout, nonFinite, unit, xRevision: revision };
}

/**
 * The smoothed values of a series: the server's when it sent them for these settings
 * (`query`: smoothmodes.smoothingQuery, or a bare EMA weight; the whole series smoothed,
 * at the points drawn, so the curve at a zoomed window's left edge is the full view's),
 * else the held points smoothed here.
 */
export function smoothedOf(series, query) {
  const q = typeof query === 'number' ? { smoothing: query } : query;
  const key = series.smoothKey !== undefined ? smoothingKey(q) : null;
  const matches = key !== null ? series.smoothKey === key
    : !q.smoothing_mode && series.smoothing === q.smoothing; // (a series without a key: EMA)
  const held = series.smoothed && matches && series.smoothed.length === series.values.length;
  return withinSeen(series.values, held ? series.smoothed : smoothHeld(series, q, smooth));
}

/**
 * `smoothed` with each value that rounding put just outside the range of the raw values up
 * to its point moved back into it: every smoothing here is a weighted mean of the values
 * seen, so a constant smooths to exactly the constant (TensorBoard's never leaves the data's
 * range either). Only rounding is undone: a value further out than FLAT (relative) is kept,
 * as a zoomed window or a downsampled series does not hold every point its smoothing saw.
 */
function withinSeen(values, smoothed) {
  const out = Float64Array.from(smoothed);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < out.length; i += 1) {
    const v = values[i];
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const s = out[i];
    if (!(lo <= hi) || !Number.isFinite(s)) continue;
    const tol = FLAT * Math.max(Math.abs(lo), Math.abs(hi));
    if (s < lo && s >= lo - tol) out[i] = lo;
    else if (s > hi && s <= hi + tol) out[i] = hi;
  }
  return out;
}
