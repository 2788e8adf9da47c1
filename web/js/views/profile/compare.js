// The profile dashboard's Compare tab: the operator table of the profile chosen on the left
// (A) against a second profile or span (B) picked here, joined by name with differences.
import { getJSONWhenReady } from '../../shared/api.js';
import { el } from '../../shared/dom.js';
import { select, fillSelect } from './fields.js';
import { SortTable, fmtUs } from './tables.js';

/** The B pickers: run, worker, profile and span, kept in `pane.sel.compare`. */
async function pickB(pane) {
  const { sel, tags } = pane;
  const b = sel.compare || { run: sel.run, tag: sel.tag, step: sel.step, span: 'all' };
  sel.compare = b;
  const runSel = select('B: run', 'compare-run', (v) => { b.run = v; b.tag = (tags[v] || [])[0] || ''; b.step = ''; pane.rerender(); });
  const tagSel = select('B: worker', 'compare-tag', (v) => { b.tag = v; b.step = ''; pane.rerender(); });
  const stepSel = select('B: profile', 'compare-step', (v) => { b.step = v; pane.rerender(); });
  const spanSel = select('B: span', 'compare-span', (v) => { b.span = v; pane.rerender(); });
  b.run = fillSelect(runSel.node, Object.keys(tags).sort().map((r) => [r, r]), b.run);
  b.tag = fillSelect(tagSel.node, (tags[b.run] || []).map((t) => [t, t]), b.tag);
  const index = await getJSONWhenReady('api/profile', { run: b.run, tag: b.tag });
  b.step = fillSelect(stepSel.node, index.steps.map((s) => [String(s), `step ${s}`]).reverse(), b.step);
  let spans = [['all', 'All steps']];
  try {
    const ov = await getJSONWhenReady('api/profile/overview', { run: b.run, tag: b.tag, step: b.step });
    spans = spans.concat(ov.summary.steps.map((s) => [String(s), `Step ${s}`]));
  } catch (_) { /* the comparison below reports the error */ }
  b.span = fillSelect(spanSel.node, spans, b.span);
  return { b, fields: [runSel.field, tagSel.field, stepSel.field, spanSel.field] };
}

/** The joined table; Δ self sorts by its size, either sign. */
function compareTable(rows) {
  const side = (s, k) => (r) => (r[s] ? r[s][k] : null);
  const signed = (v) => `${v > 0 ? '+' : ''}${fmtUs(v)}`;
  const table = new SortTable({ caption: 'Operators, A against B (B − A)', sortKey: 'diff_self', columns: [
    { key: 'name', label: 'Operator' },
    { key: 'a_calls', label: 'A calls', numeric: true, value: side('a', 'calls'), fmt: (v) => (v ?? '—') },
    { key: 'a_self', label: 'A self', numeric: true, value: side('a', 'self'), fmt: fmtUs },
    { key: 'b_calls', label: 'B calls', numeric: true, value: side('b', 'calls'), fmt: (v) => (v ?? '—') },
    { key: 'b_self', label: 'B self', numeric: true, value: side('b', 'self'), fmt: fmtUs },
    { key: 'diff_self', label: 'Δ self', numeric: true, value: (r) => r.diff_self, fmt: signed },
    { key: 'diff_calls', label: 'Δ calls', numeric: true, fmt: (v) => `${v > 0 ? '+' : ''}${v}` },
  ] });
  table.sortKey = 'diff_self';
  table.rows = rows;
  table.sorted = function sortedByAbs() {
    const key = this.sortKey;
    if (key !== 'diff_self') return SortTable.prototype.sorted.call(this);
    const sign = this.descending ? -1 : 1;
    return this.rows.filter((r) => !this.filter || r.name.toLowerCase().includes(this.filter))
      .sort((x, y) => sign * (Math.abs(x.diff_self) - Math.abs(y.diff_self)));
  };
  table.render();
  return table;
}

export async function drawCompare(holder, pane) {
  const { sel } = pane;
  const { b, fields } = await pickB(pane);
  holder.append(el('p', { class: 'muted' }, `A: ${sel.run} / ${sel.tag} (${sel.span === 'all' ? 'all steps' : `step ${sel.span}`}), chosen on the left.`),
    el('div', { class: 'prof-controls' }, fields));
  const data = await getJSONWhenReady('api/profile/compare', { ...pane.params(), span: sel.span, run2: b.run, tag2: b.tag, step2: b.step, span2: b.span });
  const table = compareTable(data.rows);
  holder.append(el('p', { class: 'muted' }, `Step time: A ${fmtUs(data.step_time.a)}, B ${fmtUs(data.step_time.b)}`), table.element);
}
