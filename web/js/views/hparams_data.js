// Pure helpers of the hyper-parameters dashboard: CSV, and the plotly parcoords and
// scatter-matrix figures. No DOM, no fetching. The columns, their values and their order are
// the run table's (shared/runtable.js): here a column is {id, label, kind} and
// value(run, column) its cell.

/** A CSV cell, quoted, with spreadsheet formula injection defused (a leading = + - @). */
function csvCell(v) {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s) && typeof v !== 'number') s = `'${s}`;
  return /[",\n\r]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCSV(columns, runs, value) {
  const lines = [columns.map((c) => csvCell(c.label)).join(',')];
  for (const run of runs) lines.push(columns.map((c) => csvCell(value(run, c))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** An experiment's domain of a hyper-parameter as text: "[lo, hi]" or "{a, b}"; '' for none. */
export function domainText(domain) {
  if (!domain) return '';
  if (Array.isArray(domain.values)) return `{${domain.values.map(String).join(', ')}}`;
  return `[${domain.min}, ${domain.max}]`;
}

/**
 * One axis per column (run excluded) usable in a chart: numbers as they are, anything else
 * (strings, booleans) as categories. Columns with no value at all are left out.
 */
export function dimensionsOf(columns, runs, value) {
  const dims = [];
  for (const c of columns) {
    if (c.kind === 'run') continue;
    const raw = runs.map((run) => value(run, c));
    const present = raw.filter((v) => v !== null && v !== undefined && !(typeof v === 'number' && !Number.isFinite(v)));
    if (!present.length) continue;
    if (present.every((v) => typeof v === 'number')) {
      dims.push({ label: c.label, values: raw.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null)) });
    } else {
      const cats = [...new Set(present.map(String))].sort();
      dims.push({
        label: c.label,
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
export function parcoordsFigure(dims, runs, colors, text) {
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
    line: { color: runs.map((_, i) => i), colorscale: runColorscale(colors), cmin: 0, cmax: Math.max(1, runs.length - 1) },
    meta: { runs: [...runs] },
  };
}

/** The scatter matrix (splom): a point per run, at most `max` dimensions. */
export function splomFigure(dims, runs, colors, text, max = 6) {
  const shown = dims.slice(0, max);
  return {
    type: 'splom',
    dimensions: shown.map((d) => ({
      label: text(d.label),
      values: d.tickvals ? d.values.map((v) => (v === null ? null : d.ticktext[v])) : d.values,
    })),
    text: runs.map((run) => text(run)),
    hovertemplate: '%{text}<extra></extra>',
    marker: { color: colors, size: 9, line: { width: 1, color: 'rgba(0,0,0,0.35)' } },
    diagonal: { visible: false },
    showupperhalf: false,
    meta: { runs: [...runs] },
  };
}
