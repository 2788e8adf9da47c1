// Grouped scalar charts: the grouping setting (kept in the URL), the request the server
// answers (/api/scalars/groups: smoothing, alignment and statistics happen there), and the
// plotly traces of each group: its band, then its centre line, whose tooltip names the group,
// its member count and its members. No fetching here.
import { plotlyText, baseLayout, axis } from '../../shared/plot.js';
import * as state from '../../shared/state.js';
import { withAlpha } from '../../shared/tint.js';
import { flatYRange } from './chart.js';

state.declare('group', ''); // "re:<regex>" | "hp:<name>,<name>" | "" (no grouping)
state.declare('gstat', 'mean');
state.declare('gband', 'minmax');

export const GROUP_MODES = [
  ['', 'No grouping'],
  ['re', 'Name regex (captures)'],
  ['hp', 'Hyper-parameters'],
];
export const GROUP_STATS = [
  ['mean', 'Mean'],
  ['median', 'Median'],
];
export const GROUP_BANDS = [
  ['minmax', 'Min – max'],
  ['std', '± 1 std'],
  ['sem', '± 1 std. error'],
];
const MAX_LISTED = 9; // members named in a tooltip, three a line; the rest are counted

/** The current grouping: null, {regex} or {hparams: [...]}, from the URL. */
export function grouping() {
  const raw = state.get('group');
  if (raw.startsWith('re:') && raw.length > 3) return { mode: 're', text: raw.slice(3), regex: raw.slice(3) };
  if (raw.startsWith('hp:')) {
    const hparams = raw.slice(3).split(',').map((h) => h.trim()).filter(Boolean);
    if (hparams.length) return { mode: 'hp', text: hparams.join(', '), hparams };
  }
  return null;
}

/** Store a grouping from the settings' mode and text ('' mode: none). */
export function setGrouping(mode, text) {
  const t = (text || '').trim();
  if (!mode || !t) state.set({ group: '' });
  else if (mode === 're') state.set({ group: `re:${t}` });
  else state.set({ group: `hp:${t.split(',').map((h) => h.trim()).filter(Boolean).join(',')}` });
}

/** The body of POST api/scalars/groups for one tag over `runs`. */
export function groupRequest(tag, runs, g, { smoothing, points, window }) {
  const body = {
    tag,
    runs,
    stat: state.get('gstat'),
    band: state.get('gband'),
    smoothing: Math.min(0.999, Math.max(0, smoothing)),
    points,
  };
  if (g.regex) body.regex = g.regex;
  else body.hparams = g.hparams;
  if (window) Object.assign(body, { start_step: window.start, end_step: window.end });
  return body;
}

function values(list) {
  return list.map((v) => (typeof v === 'number' ? v : null)); // "NaN"/"Infinity": gaps
}

/** Tooltip text of a group's members: the first few names and how many more. */
export function membersText(members) {
  const named = members.slice(0, MAX_LISTED).map(plotlyText);
  const lines = [];
  for (let i = 0; i < named.length; i += 3) lines.push(`  ${named.slice(i, i + 3).join(', ')}`);
  if (members.length > MAX_LISTED) lines[lines.length - 1] += ` … and ${members.length - MAX_LISTED} more`;
  return lines.join('<br>');
}

/**
 * {traces, layout} of a grouped chart. groups: the server's answer's groups, each with
 * `color`; opts: {stat, band, logY, uirevision, tipOrder}.
 */
export function buildGroupChart(groups, opts) {
  const traces = [];
  const bandName = GROUP_BANDS.find(([id]) => id === opts.band)?.[1] || opts.band;
  for (const g of groups) {
    const name = plotlyText(g.name);
    const fill = withAlpha(g.color, 0.2);
    const meta = { group: g.name, members: g.members };
    traces.push({
      type: 'scatter', mode: 'lines', x: g.steps, y: values(g.lower), name: `${name} (lower)`,
      line: { color: g.color, width: 0 }, hoverinfo: 'skip', showlegend: false,
      meta: { ...meta, role: 'band-lower' },
    });
    traces.push({
      type: 'scatter', mode: 'lines', x: g.steps, y: values(g.upper), name: `${name} (upper)`,
      line: { color: g.color, width: 0 }, fill: 'tonexty', fillcolor: fill, hoverinfo: 'skip',
      showlegend: false, meta: { ...meta, role: 'band-upper' },
    });
    const who = membersText(g.members);
    const n = g.members.length;
    traces.push({
      type: 'scatter',
      mode: g.steps.length === 1 ? 'markers' : 'lines',
      x: g.steps,
      y: values(g.center),
      customdata: g.steps.map((_, i) => [g.lower[i], g.upper[i], g.count[i]]),
      name: `${name} (${n} run${n === 1 ? '' : 's'})`,
      line: { color: g.color, width: 1.8 },
      // the group's name and members are plain text built here, escaped; never template
      // syntax taken from a run name ("%{" in a name is shown, not interpreted)
      hovertemplate: `%{fullData.name}: %{y:.6g} [%{customdata[0]:.4g}, %{customdata[1]:.4g}] · %{customdata[2]} at this step<br>${escapeTemplate(who)}<extra></extra>`,
      meta: { ...meta, role: 'center' },
    });
  }
  // the x axis (steps) keeps a zoom through a log-y switch and across grouping on and off
  const yaxis = axis({ type: opts.logY ? 'log' : 'linear', exponentformat: 'power', autorange: true, uirevision: String(opts.logY) });
  const flat = flatYRange(traces.map((t) => t.y), opts.logY); // not a square wave of rounding
  if (flat) Object.assign(yaxis, { range: flat, autorange: false });
  const layout = baseLayout({
    xaxis: axis({ type: 'linear', title: { text: `step · ${opts.stat} with ${bandName} band`, standoff: 4 }, uirevision: 'step' }),
    yaxis,
    hovermode: 'x unified',
    hoversort: opts.tipOrder || 'trace',
    uirevision: opts.uirevision,
    showlegend: true,
    legend: { orientation: 'h', x: 0, y: -0.22, yanchor: 'top', font: { size: 10 } },
  });
  return { traces, layout };
}

/** Make text safe inside a hovertemplate: "%{" would start a placeholder. */
function escapeTemplate(text) {
  return text.replace(/%\{/g, '%&#123;').replace(/\$/g, '&#36;');
}
