// The report of a model diff (/api/graph/diff): what was compared, the message for unrelated
// models, counts, parameters and ops before/after, the op-type table, and every changed,
// removed and added op with what changed (attributes, shapes, weights).
import { el, setChildren, fmtInt } from '../../shared/dom.js';

const MAX_ITEMS = 500; // longer lists are cut (the JSON export has them all)

function typeText(t) {
  if (!t) return '(none)';
  const shape = t.shape ? (t.shape.length ? t.shape.join('×') : 'scalar') : '?';
  return `${t.dtype || '?'} ${shape}`;
}

/** One line per change of a matched op, as plain strings (tests read them). */
export function changeLines(changes) {
  const lines = [];
  if (changes.op_type) lines.push(`op type: ${changes.op_type.before} → ${changes.op_type.after}`);
  for (const a of changes.attributes || []) {
    lines.push(`attribute ${a.name}: ${a.before ?? '(none)'} → ${a.after ?? '(none)'}`);
  }
  for (const side of ['inputs', 'outputs']) {
    for (const c of changes[side] || []) {
      lines.push(`${side.slice(0, -1)} ${c.slot}: ${typeText(c.before)} → ${typeText(c.after)}`);
    }
  }
  for (const w of changes.initializers || []) {
    const name = (w.before || w.after).name;
    const shapes = `${w.before ? typeText(w.before) : '(none)'} → ${w.after ? typeText(w.after) : '(none)'}`;
    const delta = w.max_abs_diff !== undefined ? ` (max |Δ| ${w.max_abs_diff.toPrecision(3)})` : '';
    lines.push(`weight ${name} (input ${w.slot}): ${shapes}, values ${w.values}${delta}`);
  }
  return lines;
}

function opButton(ref, side, on) {
  const text = `${ref.name || ref.id} (${ref.op_type})`;
  return el('button', { type: 'button', class: 'linkish', onclick: () => on.select(side, ref.id) }, text);
}

function list(title, items, cls, render) {
  if (!items.length) return [];
  const shown = items.slice(0, MAX_ITEMS);
  const more = items.length - shown.length;
  return [
    el('h3', {}, `${title} (${fmtInt(items.length)})`),
    el('ul', { class: `plain graph-diff-list ${cls}` }, shown.map(render),
      more > 0 ? el('li', { class: 'muted' }, `… and ${fmtInt(more)} more (in the JSON export)`) : null),
  ];
}

function table(head, rows) {
  return el('table', { class: 'props graph-diff-table' },
    el('tr', {}, head.map((h) => el('th', {}, h))),
    rows.map((r) => el('tr', { class: r.cls || '' }, r.cells.map((c) => el('td', {}, String(c))))));
}

/** Draw `body` (the diff answer) into `box`; on.select(side, id) shows an op on its side. */
export function renderDiff(box, body, on) {
  const s = body.summary;
  const c = s.counts;
  const changed = (item) => el('li', { class: 'changed', 'data-before': item.before.id, 'data-after': item.after.id },
    opButton(item.before, 'before', on),
    item.before.name !== item.after.name ? [' → ', opButton(item.after, 'after', on)] : null,
    el('span', { class: 'muted' }, ` by ${item.matched_by}`),
    el('ul', { class: 'plain changes' }, changeLines(item.changes).map((line) => el('li', {}, line))));
  setChildren(
    box,
    el('h2', { class: 'props-title' }, `${body.before.name} → ${body.after.name}`),
    body.message ? el('p', { class: 'graph-diff-message', role: 'status' }, body.message) : null,
    el('p', { class: 'graph-diff-counts' },
      `${fmtInt(c.changed)} changed, ${fmtInt(c.added)} added, ${fmtInt(c.removed)} removed, `
      + `${fmtInt(c.unchanged)} unchanged (matched: ${fmtInt(c.matched_by_name)} by name, `
      + `${fmtInt(c.matched_by_structure)} by structure)`),
    table(['', 'before', 'after'], [
      { cells: ['ops', fmtInt(s.ops.before), fmtInt(s.ops.after)] },
      { cells: ['parameters', fmtInt(s.parameters.before), fmtInt(s.parameters.after)] },
    ]),
    el('h3', {}, 'Ops by type'),
    table(['op type', 'before', 'after'], s.op_types.map((r) => ({
      cells: [r.op_type, r.before, r.after], cls: r.before !== r.after ? 'differs' : '',
    }))),
    body.truncated ? el('p', { class: 'muted' }, 'Long lists were cut by the server.') : null,
    ...list('Changed', body.changed, 'changed-ops', changed),
    ...list('Removed', body.removed, 'removed-ops', (item) => el('li', { class: 'removed', 'data-before': item.before.id }, opButton(item.before, 'before', on))),
    ...list('Added', body.added, 'added-ops', (item) => el('li', { class: 'added', 'data-after': item.after.id }, opButton(item.after, 'after', on))),
  );
}
