// The profile dashboard's Operators and Kernels tabs: calls, self and total time, mean and
// share of the step per operator (by name, or name and input shapes) or GPU kernel, a
// searchable sortable table and a bar chart of the top N by self time.
import { getJSONWhenReady } from '../../shared/api.js';
import { el, uid, debounce } from '../../shared/dom.js';
import { baseLayout, axis, plotlyText, loadPlotly } from '../../shared/plot.js';
import { SortTable, fmtUs, fmtPct } from './tables.js';
import { showInGraph } from '../graph/link.js';

/** The "Show in graph" cell of an operator row (the profiled model's graph, see link.js): the
 *  profile and span shown here are the ones the graph is coloured by. */
function graphCell(pane, row, status) {
  const { run, tag, step } = pane.params();
  const { span } = pane.sel;
  return el('button', { type: 'button', class: 'btn small show-in-graph', title: `Show the nodes ${row.name} ran on in the model graph`,
    onclick: () => showInGraph({ run, tag, step, span, op: row.name }).catch((err) => { status.textContent = err.message; }) }, 'Show in graph');
}

function columnsOf(which, data, pane, status) {
  return [
    { key: 'name', label: which === 'kernels' ? 'Kernel' : 'Operator' },
    ...(data.group === 'shapes' ? [{ key: 'shapes', label: 'Input shapes' }] : []),
    { key: 'calls', label: 'Calls', numeric: true, fmt: (v) => v.toLocaleString('en-US') },
    { key: 'self', label: 'Self', numeric: true, fmt: fmtUs },
    { key: 'total', label: 'Total', numeric: true, fmt: fmtUs },
    { key: 'mean', label: 'Mean', numeric: true, fmt: fmtUs },
    { key: 'self_share', label: 'Self % of step', numeric: true, fmt: fmtPct },
    { key: 'total_share', label: 'Total % of step', numeric: true, fmt: fmtPct },
    ...(which === 'operators' ? [{ key: 'graph', label: 'Graph', value: () => '', fmt: (v, r) => graphCell(pane, r, status) }] : []),
  ];
}

/** Draw the `which` tab ('operators' | 'kernels') into `holder`; the group and top N chosen
 *  are kept in `pane.sel`. */
export async function drawOperators(holder, pane, which) {
  const sel = pane.sel;
  const group = sel.group || 'name';
  const q = { ...pane.params(), span: sel.span };
  if (which === 'operators') q.group = group;
  const data = await getJSONWhenReady(`api/profile/${which}`, q);
  const status = el('p', { class: 'prof-error', role: 'status', 'aria-live': 'polite' });
  const table = new SortTable({ columns: columnsOf(which, data, pane, status), caption: `${which === 'kernels' ? 'Kernels' : 'Operators'} (${data.span === 'all' ? 'all steps' : `step ${data.span}`})`, sortKey: 'self',
    rowKey: (r) => (r.shapes !== undefined ? `${r.name} ${r.shapes}` : r.name) });
  table.setRows(data.rows);
  const searchId = uid('prof');
  const search = el('input', { id: searchId, type: 'search', name: `${which}-search`, placeholder: 'name contains…', oninput: debounce(() => table.setFilter(search.value), 100) });
  const topId = uid('prof');
  const topN = el('input', { id: topId, type: 'number', min: '1', max: '100', value: String(sel.topN || 10), name: 'top-n', onchange: () => {
    sel.topN = Math.max(1, Math.min(100, Number(topN.value) || 10));
    drawTop();
  } });
  const controls = [el('label', { for: searchId }, 'Search '), search, el('label', { for: topId }, ' Top N '), topN];
  if (which === 'operators') {
    const groupId = uid('prof');
    const groupSel = el('select', { id: groupId, name: 'group', onchange: () => {
      sel.group = groupSel.value;
      pane.rerender();
    } }, el('option', { value: 'name' }, 'name'), el('option', { value: 'shapes' }, 'name + input shapes'));
    groupSel.value = group;
    controls.push(el('label', { for: groupId }, ' Group by '), groupSel);
  }
  const plot = pane.plot(`Top ${which} by self time`);
  holder.append(el('div', { class: 'prof-controls' }, controls), status,
    el('p', { class: 'muted' }, `${data.rows.length} rows · step time ${fmtUs(data.step_time)}`),
    el('section', { class: 'card' }, el('h3', {}, `Top ${which} by self time`), plot.element), table.element);
  await loadPlotly();
  const drawTop = () => {
    const top = [...data.rows].sort((a, b) => b.self - a.self).slice(0, sel.topN || 10).reverse();
    if (!top.length) return;
    // a bar per row, told apart by its index: names (and shapes) may repeat
    const ids = top.map((r, i) => `${plotlyText(r.name)}${r.shapes ? ` ${plotlyText(r.shapes)}` : ''}#${i}`);
    plot.element.style.height = `${Math.max(200, 24 * top.length + 60)}px`;
    plot.draw([{ type: 'bar', orientation: 'h', x: top.map((r) => r.self / 1000), y: ids,
      marker: { color: '#4e79a7' }, hovertemplate: '%{x:.3f} ms<extra></extra>' }],
    baseLayout({ margin: { l: 260, r: 12, t: 8, b: 40 },
      xaxis: axis({ title: { text: 'self time (ms)' } }), yaxis: axis({ automargin: true, tickmode: 'array', tickvals: ids, ticktext: top.map((r) => plotlyText(r.name).slice(0, 40)) }) }));
  };
  drawTop();
}
