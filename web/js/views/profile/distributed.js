// The profile dashboard's Distributed tab: every worker (rank) of the run side by side, as
// the TensorBoard profiler plugin's distributed view showed it: a stacked bar per rank of
// its steps' computation, communication overlapped with computation, communication and
// other time; the slowest rank and how long the others wait for it; the collectives table.
// One request (api/profile/distributed), relative so the app works behind a path prefix.
import { getJSONWhenReady } from '../../shared/api.js';
import { el } from '../../shared/dom.js';
import { baseLayout, axis, plotlyText, loadPlotly } from '../../shared/plot.js';
import { fmtUs, fmtBytesSigned } from './tables.js';

const PART_COLORS = { computation: '#4e79a7', overlap: '#76b7b2', communication: '#f28e2b', other: '#bab0ac' };

const ms = (us) => (us / 1000).toFixed(3);

function rankLabel(r) {
  return `rank ${r.rank} (${r.worker})`;
}

function fmtBandwidth(bps) {
  if (bps === null || bps === undefined) return '—';
  return `${fmtBytesSigned(bps)}/s`;
}

/** Per rank: its steps' parts summed, the step time and the wait for the slowest (ms). */
function ranksTable(d) {
  const cols = [...d.parts.map((p) => [p, d.labels[p]]), ['step', 'Steps'], ['wait', 'Waits for slowest']];
  return el('table', { class: 'prof-table prof-dist-ranks' },
    el('caption', {}, `Per rank, the ${d.steps.length} steps every rank has (${d.steps[0]}–${d.steps[d.steps.length - 1]}) summed (ms)`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Rank'), cols.map(([, label]) => el('th', { scope: 'col', class: 'num' }, label)))),
    el('tbody', {}, d.ranks.map((r) => el('tr', { dataset: { rank: String(r.rank) } }, el('th', { scope: 'row' }, rankLabel(r)),
      cols.map(([key]) => el('td', { class: 'num', dataset: { key } }, ms(r.totals[key])))))));
}

/** The collectives of every rank: op, calls, bytes, time, effective bandwidth. */
function collectivesTable(d) {
  const rows = d.ranks.flatMap((r) => r.collectives.map((c) => ({ ...c, rank: r })));
  return el('table', { class: 'prof-table prof-dist-collectives' },
    el('caption', {}, 'Collective operations (the whole profile of each rank)'),
    el('thead', {}, el('tr', {}, ['Rank', 'Operation', 'Calls', 'Bytes', 'Time', 'Bandwidth'].map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'num' : '' }, h)))),
    el('tbody', {}, rows.map((c) => el('tr', { dataset: { rank: String(c.rank.rank), op: c.op } },
      el('th', { scope: 'row' }, rankLabel(c.rank)),
      el('td', { dataset: { key: 'op' } }, c.op),
      el('td', { class: 'num', dataset: { key: 'calls' } }, c.calls.toLocaleString('en-US')),
      el('td', { class: 'num', dataset: { key: 'bytes' } }, c.bytes === null ? '—' : fmtBytesSigned(c.bytes)),
      el('td', { class: 'num', dataset: { key: 'time' } }, fmtUs(c.time)),
      el('td', { class: 'num', dataset: { key: 'bandwidth' } }, fmtBandwidth(c.bandwidth))))));
}

function slowestText(d) {
  const slow = d.ranks.find((r) => r.rank === d.slowest);
  const others = d.ranks.filter((r) => r !== slow).map((r) => `${rankLabel(r)} ${ms(r.totals.wait)} ms`);
  return `Slowest rank: ${rankLabel(slow)}, computing ${ms(slow.totals.compute)} ms in ${d.steps.length} steps` +
    (others.length ? `; the others wait for it: ${others.join(', ')}.` : '.');
}

/** Draw the tab into `holder` from the run's workers, each one's newest profile (the
 *  ranks' steps are matched by number, so their profiles' own step labels need not agree). */
export async function drawDistributed(holder, pane) {
  const d = await getJSONWhenReady('api/profile/distributed', { run: pane.params().run });
  if (d.warnings.length) {
    holder.append(el('ul', { class: 'prof-dist-warnings', role: 'note' }, d.warnings.map((w) => el('li', {}, w))));
  }
  if (!d.has_comm) {
    holder.append(el('p', { class: 'empty prof-dist-nocomm' },
      `This run has no communication: ${d.ranks.length === 1 ? 'one worker' : `${d.ranks.length} workers`}, no collective events (record_param_comms, nccl, gloo, c10d) in the traces. All the steps' busy time is computation.`));
  }
  const plot = pane.plot('Step time per rank: computation, overlapped, communication, other', 'plot prof-dist-plot');
  holder.append(el('p', { class: 'prof-dist-slowest', dataset: { rank: String(d.slowest) } }, slowestText(d)),
    el('section', { class: 'card' }, el('h3', {}, 'Where each rank spends its steps'), plot.element),
    ranksTable(d), collectivesTable(d));
  const y = d.ranks.map(rankLabel);
  await loadPlotly();
  plot.draw(d.parts.map((p) => ({
    type: 'bar',
    orientation: 'h',
    name: d.labels[p],
    y,
    x: d.ranks.map((r) => r.totals[p] / 1000),
    marker: { color: PART_COLORS[p] },
    meta: { part: p },
    hovertemplate: `${plotlyText(d.labels[p])}: %{x:.3f} ms<extra>%{y}</extra>`,
  })), baseLayout({ barmode: 'stack', showlegend: true, legend: { orientation: 'h', y: 1.2, traceorder: 'normal' }, height: 120 + 48 * d.ranks.length,
    margin: { l: 140, r: 12, t: 40, b: 40 }, yaxis: axis({ type: 'category', autorange: 'reversed' }), xaxis: axis({ title: { text: 'ms (steps summed)' } }) }));
}
