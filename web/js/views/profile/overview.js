// The profile dashboard's Overview tab: each step's wall time split into phases (a stacked
// bar per step, and the same as a table) and the environment the trace was taken in.
import { el } from '../../shared/dom.js';
import { baseLayout, axis, plotlyText, loadPlotly } from '../../shared/plot.js';

const PHASE_COLORS = {
  data: '#8c6bb1', forward: '#4e79a7', backward: '#f28e2b', optimizer: '#59a14f', compile: '#e15759',
  kernel: '#76b7b2', memcpy: '#edc948', runtime: '#b07aa1', other: '#bab0ac',
};
const MAX_BARS = 300;

/** At most MAX_BARS rows: consecutive steps grouped, each group's mean per phase (a trace
 *  of 20,000 steps would otherwise be 20,000 bars and table rows). */
function bucketSteps(steps, phases) {
  if (steps.length <= MAX_BARS) return steps.map((s) => ({ ...s, label: `step ${s.step}` }));
  const size = Math.ceil(steps.length / MAX_BARS);
  const out = [];
  for (let i = 0; i < steps.length; i += size) {
    const group = steps.slice(i, i + size);
    const parts = {};
    for (const ph of phases) parts[ph] = group.reduce((a, s) => a + s.parts[ph], 0) / group.length;
    out.push({ step: group[0].step, label: `steps ${group[0].step}–${group[group.length - 1].step}`, parts,
      dur: group.reduce((a, s) => a + s.dur, 0) / group.length });
  }
  return out;
}

/** The per-step table (ms). */
function stepsTable(o, rows, used) {
  return el('table', { class: 'prof-table prof-steps' },
    el('caption', {}, rows.length < o.steps.length ? `Per step (ms; mean of each group of ${o.steps.length.toLocaleString('en-US')} steps)` : 'Per step (ms)'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Step'), el('th', { scope: 'col', class: 'num' }, 'Wall'),
      used.map((ph) => el('th', { scope: 'col', class: 'num' }, o.labels[ph])))),
    el('tbody', {}, rows.map((s) => el('tr', { dataset: { step: String(s.step) } }, el('th', { scope: 'row' }, s.label.replace(/^steps? /, '')),
      el('td', { class: 'num', dataset: { key: 'dur' } }, (s.dur / 1000).toFixed(3)),
      used.map((ph) => el('td', { class: 'num', dataset: { key: ph } }, (s.parts[ph] / 1000).toFixed(3)))))));
}

function environmentTable(env) {
  const envRows = Object.entries(env.fields).map(([k, v]) => [k, String(v)]);
  envRows.push(['traced threads', env.threads.join(', ')]);
  env.devices.forEach((d, i) => envRows.push([`device ${i}`, typeof d === 'object' ? Object.entries(d).map(([k, v]) => `${k}: ${v}`).join(', ') : String(d)]));
  return el('table', { class: 'prof-kv prof-env' }, el('caption', {}, 'Environment'),
    el('tbody', {}, envRows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))));
}

/** Draw the tab into `holder` from `pane.overview` (the /api/profile/overview answer). */
export async function drawOverview(holder, pane) {
  const o = pane.overview;
  const used = o.phases.filter((ph) => o.totals[ph] > 0);
  const plot = pane.plot('Step time by phase, stacked per step');
  const rows = bucketSteps(o.steps, o.phases);
  const x = rows.map((s) => s.label);
  const traces = used.map((ph) => ({
    type: 'bar',
    name: o.labels[ph],
    x,
    y: rows.map((s) => s.parts[ph] / 1000),
    marker: { color: PHASE_COLORS[ph] },
    meta: { phase: ph },
    hovertemplate: `${plotlyText(o.labels[ph])}: %{y:.3f} ms<extra>%{x}</extra>`,
  }));
  const steps = stepsTable(o, rows, used);
  const envTable = environmentTable(o.environment);
  if (!o.steps.length) holder.append(el('p', { class: 'muted' }, 'This trace marks no steps (ProfilerStep#N): use the operator table and timeline.'));
  holder.append(el('section', { class: 'card' }, el('h3', {}, 'Step time breakdown'), plot.element), steps, envTable);
  if (o.steps.length) {
    await loadPlotly();
    plot.draw(traces, baseLayout({ barmode: 'stack', showlegend: true, legend: { orientation: 'h', y: 1.12 }, margin: { l: 56, r: 12, t: 40, b: 40 },
      xaxis: axis({ type: 'category' }), yaxis: axis({ title: { text: 'ms' } }) }));
  }
}
