// The colour scale of "Colour by" and the formatting of node values. One function maps a
// value to its fill, so the drawing, the legend and the tests agree on every colour.
const STOPS = [[0, [255, 245, 235]], [0.5, [253, 174, 107]], [1, [217, 72, 1]]];
const LOG_SPAN = 100; // a log scale once the positive values span more than this ratio

function mix(t) {
  for (let i = 1; i < STOPS.length; i += 1) {
    const [t1, c1] = STOPS[i];
    const [t0, c0] = STOPS[i - 1];
    if (t <= t1) {
      const f = t1 > t0 ? (t - t0) / (t1 - t0) : 0;
      return c0.map((c, k) => Math.round(c + (c1[k] - c) * f));
    }
  }
  return STOPS[STOPS.length - 1][1];
}

function hex(rgb) {
  return `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

/** The scale over `values` (numbers): {lo, hi, log, color(v) -> '#rrggbb', gradient (CSS)}. */
export function makeScale(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  const lo = finite.length ? Math.min(...finite) : 0;
  const hi = finite.length ? Math.max(...finite) : 0;
  const positive = finite.filter((v) => v > 0);
  const pmin = positive.length ? Math.min(...positive) : 0;
  const log = lo >= 0 && positive.length > 1 && hi / pmin > LOG_SPAN;
  const t = (v) => {
    if (!Number.isFinite(v) || hi === lo) return 1;
    if (log) return v <= 0 ? 0 : Math.max(0, Math.log(v / pmin) / Math.log(hi / pmin));
    return (v - lo) / (hi - lo);
  };
  const gradient = `linear-gradient(to right, ${STOPS.map(([s, c]) => `${hex(c)} ${s * 100}%`).join(', ')})`;
  return { lo, hi, log, color: (v) => hex(mix(Math.min(1, Math.max(0, t(v))))), gradient };
}

function compact(v) {
  const a = Math.abs(v);
  for (const [n, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'K']]) {
    if (a >= n) return `${(v / n).toFixed(a >= n * 100 ? 0 : 1)}${s}`;
  }
  return Number.isInteger(v) ? String(v) : v.toPrecision(3);
}

/** A value in its unit: parameters and FLOPs compact (1.2M), times in µs/ms/s, fractions in %. */
export function fmtValue(v, unit) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (unit === 'us') {
    const a = Math.abs(v);
    if (a >= 1e6) return `${(v / 1e6).toFixed(2)} s`;
    if (a >= 1e3) return `${(v / 1e3).toFixed(2)} ms`;
    return `${v.toFixed(1)} µs`;
  }
  if (unit === 'fraction') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'FLOPs') return `${compact(v)} FLOPs`;
  if (unit === 'parameters') return compact(v);
  return Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(2) : String(Number(v.toPrecision(4)));
}

/** The unit as the legend names it. */
export function unitLabel(unit) {
  return { us: 'time per step', fraction: 'fraction of zeros', FLOPs: 'FLOPs', parameters: 'parameters' }[unit] || 'value';
}
