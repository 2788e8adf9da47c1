// The profile dashboard's Memory tab: allocated bytes over time per device, each device's
// peak, and the operators that allocate most.
import { getJSONWhenReady } from '../../shared/api.js';
import { el } from '../../shared/dom.js';
import { baseLayout, axis, plotlyText, loadPlotly } from '../../shared/plot.js';
import { fmtTime } from './timeline.js';
import { SortTable, fmtBytesSigned } from './tables.js';

export async function drawMemory(holder, pane) {
  const data = await getJSONWhenReady('api/profile/memory', pane.params());
  if (!data.devices.length) {
    holder.append(el('p', { class: 'empty' }, 'This trace has no memory events (profile with profile_memory=True).'));
    return;
  }
  const plot = pane.plot('Allocated memory over time per device');
  holder.append(el('section', { class: 'card' }, el('h3', {}, 'Allocated memory'), plot.element));
  const peaks = el('ul', { class: 'prof-peaks' }, data.devices.map((d) => el('li', { dataset: { device: d.device, peak: String(d.peak) } },
    `${d.device}: peak ${fmtBytesSigned(d.peak)} at ${fmtTime(d.peak_ts - data.t0)} (${d.events.toLocaleString('en-US')} events)`)));
  holder.append(peaks);
  const table = new SortTable({ caption: 'Operators that allocate most', sortKey: 'bytes', columns: [
    { key: 'name', label: 'Operator' },
    { key: 'bytes', label: 'Allocated', numeric: true, fmt: fmtBytesSigned },
    { key: 'allocations', label: 'Allocations', numeric: true, fmt: (v) => v.toLocaleString('en-US') },
  ] });
  table.setRows(data.top_ops);
  holder.append(table.element);
  await loadPlotly();
  plot.draw(data.devices.map((d) => ({ type: 'scatter', mode: 'lines', line: { shape: 'hv' }, name: plotlyText(d.device),
    x: d.ts.map((t) => (t - data.t0) / 1000), y: d.allocated, meta: { device: d.device } })),
  baseLayout({ showlegend: true, xaxis: axis({ title: { text: 'time (ms)' } }), yaxis: axis({ title: { text: 'bytes allocated' } }) }));
}
