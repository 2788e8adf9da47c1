// Pure functions that turn scalar series into plotly traces and layout: smoothing, x-axis
// modes, outlier-robust y range and markers for non-finite values. No DOM, no fetching.
import { plotlyText, baseLayout, axis } from '../shared/plot.js';

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
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

/**
 * Build {traces, layout, stats} for one chart.
 * runs: [{run, color, series: {steps, wall, values, total, downsampled, start}}]
 * opts: {smoothing, xMode, logY, ignoreOutliers, tipOrder, uirevision}
 */
export function buildChart(runs, opts) {
  const traces = [];
  const shapes = [];
  const nonFinite = [];
  const spans = runs.map(({ series }) => {
    const last = series.wall.length ? series.wall[series.wall.length - 1] : 0;
    return Number.isFinite(series.start) ? last - series.start : 0;
  });
  const unit = relativeUnit(Math.max(0, ...spans));
  const smoothing = opts.smoothing;
  for (const { run, color, series } of runs) {
    const x = xValues(series, opts.xMode, unit);
    const name = plotlyText(run);
    const raw = finiteOrNull(series.values);
    const bad = [];
    series.values.forEach((v, i) => {
      if (!Number.isFinite(v)) bad.push(i);
    });
    if (bad.length) nonFinite.push({ run, count: bad.length });
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
    if (smoothing > 0) {
      traces.push({
        type: 'scatter',
        mode: 'lines',
        x,
        y: raw,
        name,
        line: { color, width: 1 },
        opacity: 0.25,
        hoverinfo: 'skip',
        meta: { run, role: 'raw' },
      });
      traces.push({
        type: 'scatter',
        mode: 'lines',
        x,
        y: finiteOrNull(smooth(series.values, smoothing)),
        customdata: raw,
        name,
        line: { color, width: 1.6 },
        hovertemplate: `${fmt} (raw %{customdata:.6g})<extra></extra>`,
        meta: { run, role: 'smoothed' },
      });
    } else {
      traces.push({
        type: 'scatter',
        mode: 'lines',
        x,
        y: raw,
        name,
        line: { color, width: 1.6 },
        hovertemplate: `${fmt}<extra></extra>`,
        meta: { run, role: 'raw' },
      });
    }
  }
  const xTitle = {
    step: 'step',
    relative: `relative time (${unit.label})`,
    wall: 'wall time',
  }[opts.xMode];
  const yaxis = axis({ type: opts.logY ? 'log' : 'linear', exponentformat: 'power' });
  const range = opts.ignoreOutliers ? robustRange(runs.map((r) => r.series.values), opts.logY) : null;
  if (range) {
    yaxis.range = range;
    yaxis.autorange = false;
  } else {
    yaxis.autorange = true;
  }
  const layout = baseLayout({
    xaxis: axis({
      type: opts.xMode === 'wall' ? 'date' : 'linear',
      title: { text: xTitle, standoff: 4 },
    }),
    yaxis,
    shapes,
    hovermode: 'x unified',
    hoversort: opts.tipOrder || 'trace', // plotly.js >= 3.6
    uirevision: opts.uirevision,
  });
  return { traces, layout, nonFinite };
}
