// Pure helpers of the hyper-parameters dashboard: the columns of the table, sorting, CSV, and
// the plotly parcoords and scatter-matrix figures. No DOM, no fetching.

/** Columns: the run, every hparam, every metric. {key, label, group, get(row)} */
export function columnsOf(table) {
  return [
    { key: 'run', label: 'Run', group: 'run', get: (r) => r.run },
    ...table.hparam_names.map((n) => ({ key: `h:${n}`, label: n, group: 'hparam', get: (r) => r.hparams[n] })),
    ...table.metric_names.map((n) => ({ key: `m:${n}`, label: n, group: 'metric', get: (r) => metricValue(r.metrics[n]) })),
  ];
}

/** Metric values arrive as numbers, null, or "NaN"/"Infinity" strings. */
function metricValue(v) {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Number(v) : v;
}

/** Compare for sorting: numbers numerically, others as text; missing values last. */
export function compareValues(a, b) {
  const missing = (v) => v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));
  if (missing(a) || missing(b)) return missing(a) - missing(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

export function sortRows(rows, column, descending) {
  const sign = descending ? -1 : 1;
  return [...rows].sort((x, y) => {
    const a = column.get(x);
    const b = column.get(y);
    const missing = (v) => v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));
    if (missing(a) !== missing(b)) return missing(a) ? 1 : -1; // missing last either way
    return sign * compareValues(a, b);
  });
}

/** A CSV cell, quoted, with spreadsheet formula injection defused (a leading = + - @). */
function csvCell(v) {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s) && typeof v !== 'number') s = `'${s}`;
  return /[",\n\r]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCSV(columns, rows) {
  const lines = [columns.map((c) => csvCell(c.label)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvCell(c.get(row))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * One axis per column (run excluded) usable in a chart: numbers as they are, anything else
 * (strings, booleans) as categories. Columns with no value at all are left out.
 */
export function dimensionsOf(columns, rows) {
  const dims = [];
  for (const c of columns) {
    if (c.group === 'run') continue;
    const raw = rows.map((r) => c.get(r));
    const present = raw.filter((v) => v !== null && v !== undefined && !(typeof v === 'number' && !Number.isFinite(v)));
    if (!present.length) continue;
    if (present.every((v) => typeof v === 'number')) {
      dims.push({ label: c.label, group: c.group, values: raw.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null)) });
    } else {
      const cats = [...new Set(present.map(String))].sort();
      dims.push({
        label: c.label,
        group: c.group,
        values: raw.map((v) => (v === null || v === undefined ? null : cats.indexOf(String(v)))),
        tickvals: cats.map((_, i) => i),
        ticktext: cats,
      });
    }
  }
  return dims;
}

/** Runs to colors for parcoords: a stepped colorscale whose i-th step is run i's color. */
function runColorscale(colors) {
  if (colors.length === 1) return [[0, colors[0]], [1, colors[0]]];
  return colors.map((c, i) => [i / (colors.length - 1), c]);
}

/** Parallel coordinates: one line per run in its color. */
export function parcoordsFigure(dims, rows, colors, text) {
  const dimensions = dims.map((d) => {
    const finite = d.values.filter((v) => v !== null);
    const lo = Math.min(...finite);
    const hi = Math.max(...finite);
    const pad = hi > lo ? 0 : 0.5; // a constant axis still needs a range
    // a missing value is drawn just below the axis range rather than dropped
    const out = {
      label: text(d.label),
      values: d.values.map((v) => (v === null ? lo - pad - (hi - lo || 1) * 0.05 : v)),
      range: [lo - pad, hi + pad],
    };
    if (d.tickvals) Object.assign(out, { tickvals: d.tickvals, ticktext: d.ticktext.map(text) });
    return out;
  });
  return {
    type: 'parcoords',
    dimensions,
    line: { color: rows.map((_, i) => i), colorscale: runColorscale(colors), cmin: 0, cmax: Math.max(1, rows.length - 1) },
    meta: { runs: rows.map((r) => r.run) },
  };
}

/** The scatter matrix (splom): a point per run, at most `max` dimensions. */
export function splomFigure(dims, rows, colors, text, max = 6) {
  const shown = dims.slice(0, max);
  return {
    type: 'splom',
    dimensions: shown.map((d) => ({
      label: text(d.label),
      values: d.tickvals ? d.values.map((v) => (v === null ? null : d.ticktext[v])) : d.values,
    })),
    text: rows.map((r) => text(r.run)),
    hovertemplate: '%{text}<extra></extra>',
    marker: { color: colors, size: 9, line: { width: 1, color: 'rgba(0,0,0,0.35)' } },
    diagonal: { visible: false },
    showupperhalf: false,
    meta: { runs: rows.map((r) => r.run) },
  };
}
