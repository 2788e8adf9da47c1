// Pure functions turning a projection from /api/embeddings/projection into plotly traces:
// coloring by a metadata column (categories or a numeric scale) and search highlighting.
// No DOM, no fetching.
import { safeRegExp, bounded } from '../shared/regex.js';

const PALETTE = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf',
  '#bcbd22', '#7f7f7f', '#3366cc', '#dc3912', '#0099c6', '#dd4477', '#66aa00', '#b82e2e',
  '#316395', '#994499', '#22aa99', '#aaaa11',
];
const MAX_CATEGORIES = PALETTE.length; // more distinct values than this: the rest are "other"
const WEBGL_ABOVE = 3000; // 2D points beyond which scattergl is much faster than SVG

/** A case-insensitive matcher for the search box: a regex, or plain text if it is not one. */
export function matcher(text) {
  if (!text) return { test: () => false, error: false };
  const { re, limit } = safeRegExp(text, 'i'); // an invalid or refused one (shared/regex.js): text
  if (re) return { test: (s) => re.test(bounded(s, limit)), error: false };
  const lower = text.toLowerCase();
  return { test: (s) => s.toLowerCase().includes(lower), error: true };
}

/** Groups of point indices by the value of column `col` (-1: one group). */
export function groupBy(metadata, n, col) {
  if (col < 0 || !metadata.length) return { groups: [{ name: 'points', idx: [...Array(n).keys()] }], numeric: null };
  const values = metadata.map((row) => (row[col] === undefined ? '' : String(row[col])));
  const distinct = new Map();
  values.forEach((v, i) => {
    if (!distinct.has(v)) distinct.set(v, []);
    distinct.get(v).push(i);
  });
  const nums = values.map(Number);
  if (distinct.size > MAX_CATEGORIES && values.every((v) => v !== '' && Number.isFinite(Number(v)))) {
    return { groups: [{ name: 'points', idx: [...Array(n).keys()] }], numeric: nums };
  }
  const sorted = [...distinct.entries()].sort((a, b) => b[1].length - a[1].length);
  const groups = sorted.slice(0, MAX_CATEGORIES - 1).map(([name, idx]) => ({ name, idx }));
  const rest = sorted.slice(MAX_CATEGORIES - 1).flatMap(([, idx]) => idx);
  if (rest.length) groups.push({ name: `other (${sorted.length - MAX_CATEGORIES + 1} values)`, idx: rest, other: true });
  return { groups, numeric: null };
}

/**
 * embeddingFigure(projection, {colorBy, search, theme, layout, axis, text})
 *   -> {traces, layout, points, matches, searchError}
 */
export function embeddingFigure(p, opts) {
  const dims = p.coords.length;
  const n = p.coords[0].length;
  const coords = p.coords.map((c) => c.map(Number));
  const header = p.metadata_header || [];
  const hover = p.metadata.length
    ? p.metadata.map((row) => row.map((v, k) => `${opts.text(header[k] || `col ${k}`)}: ${opts.text(v)}`).join('<br>'))
    : p.indices.map((i) => `row ${i}`);
  const type = dims === 3 ? 'scatter3d' : n > WEBGL_ABOVE ? 'scattergl' : 'scatter';
  const m = matcher(opts.search);
  const hits = [];
  if (opts.search) {
    const rows = p.metadata.length ? p.metadata.map((r) => r.join(' ')) : p.indices.map(String);
    rows.forEach((r, i) => m.test(r) && hits.push(i));
  }
  const dim = opts.search ? 0.25 : 0.85;
  const { groups, numeric } = groupBy(p.metadata, n, opts.colorBy);
  const pick = (idx, k) => idx.map((i) => coords[k][i]);
  const traces = groups.map((g, gi) => {
    const t = {
      type, mode: 'markers', name: opts.text(g.name), x: pick(g.idx, 0), y: pick(g.idx, 1),
      text: g.idx.map((i) => hover[i]), hovertemplate: '%{text}<extra></extra>',
      customdata: g.idx.map((i) => p.indices[i]), // the matrix row, for its thumbnail
      marker: { size: dims === 3 ? 3 : 6, opacity: dim, color: g.other ? opts.theme.muted : PALETTE[gi % PALETTE.length] },
      meta: { role: 'points' },
    };
    if (dims === 3) t.z = pick(g.idx, 2);
    if (numeric) Object.assign(t.marker, { color: g.idx.map((i) => numeric[i]), colorscale: 'Viridis', showscale: true, colorbar: { thickness: 10 } });
    return t;
  });
  if (hits.length) {
    const t = {
      type, mode: 'markers', name: 'matches', x: pick(hits, 0), y: pick(hits, 1),
      text: hits.map((i) => hover[i]), hovertemplate: '%{text}<extra>match</extra>',
      customdata: hits.map((i) => p.indices[i]),
      marker: { size: dims === 3 ? 6 : 11, color: 'rgba(0,0,0,0)', line: { color: opts.theme.fg, width: 2 } },
      meta: { role: 'matches' },
    };
    if (dims === 3) t.z = pick(hits, 2);
    traces.push(t);
  }
  const base = opts.layout({ showlegend: groups.length > 1, legend: { orientation: 'h', y: -0.12 }, hovermode: 'closest', uirevision: `${p.method}${dims}` });
  if (dims === 3) {
    base.scene = { xaxis: opts.axis({}), yaxis: opts.axis({}), zaxis: opts.axis({}) };
    base.margin = { l: 0, r: 0, t: 0, b: 0 };
  } else {
    base.xaxis = opts.axis({ zeroline: false });
    base.yaxis = opts.axis({ zeroline: false, scaleanchor: 'x' });
  }
  return { traces, layout: base, points: n, matches: hits.length, searchError: m.error };
}
