// The properties panel: the model (nothing selected), a node, or a group.
import { el, setChildren, fmtInt } from '../../shared/dom.js';
import { fmtBytes } from '../../shared/format.js';

function fmtShape(shape) {
  if (shape === null || shape === undefined) return '?';
  return shape.length ? shape.join('×') : 'scalar';
}

function table(rows) {
  return el(
    'table',
    { class: 'props' },
    el('tbody', {}, rows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))),
  );
}

function section(title, ...content) {
  return el('section', { class: 'props-section' }, el('h3', {}, title), ...content);
}

export function renderModel(panel, summary, model) {
  const m = summary.metadata;
  const c = summary.counts;
  const io = (list) => list.map((v) => el('li', {}, el('code', {}, v.name), ` ${v.dtype || '?'} ${fmtShape(v.shape)}`));
  setChildren(
    panel,
    el('h2', { class: 'props-title' }, model ? model.name : 'Model'),
    table([
      ['Producer', `${m.producer || '?'} ${m.producer_version || ''}`.trim()],
      ['IR version', String(m.ir_version)],
      ['Opsets', m.opsets.map((o) => `${o.domain} ${o.version}`).join(', ') || '?'],
      ['Graph', m.graph_name || ''],
      ['Ops', fmtInt(c.nodes)],
      ['Edges', fmtInt(c.edges)],
      ['Groups', fmtInt(c.groups)],
      ['Weights', `${fmtInt(c.initializers)} (${fmtInt(c.parameters)} values)`],
    ]),
    section('Inputs', el('ul', { class: 'plain' }, io(summary.inputs))),
    section('Outputs', el('ul', { class: 'plain' }, io(summary.outputs))),
    summary.warnings.length
      ? section('Warnings', el('ul', { class: 'plain warn' }, summary.warnings.map((w) => el('li', {}, w))))
      : null,
  );
}

/** `actions`: {select(id), showTensor(name, target)} */
export function renderNode(panel, node, actions) {
  const link = (id, text) => el('button', { type: 'button', class: 'linkish', onclick: () => actions.select(id) }, text);
  const value = (v) => {
    if (!v.name) return el('li', { class: 'muted' }, '(omitted)');
    const li = el('li', {}, el('code', {}, v.name), ` ${v.dtype || '?'} ${fmtShape(v.shape)}`);
    if (v.producer) li.append(' ← ', link(v.producer, v.producer));
    if (v.consumers && v.consumers.length) {
      li.append(' → ');
      v.consumers.slice(0, 8).forEach((id, i) => li.append(i ? ', ' : '', link(id, id)));
    }
    if (v.initializer) {
      const init = v.initializer;
      const box = el('div', { class: 'init' });
      const btn = el('button', { type: 'button', class: 'btn small', onclick: () => actions.showTensor(v.name, box) }, 'Show values');
      li.append(
        el('div', { class: 'muted' }, `weight: ${fmtInt(init.size)} values, ${fmtBytes(init.nbytes)}${init.external ? ', external data' : ''} `, btn),
        box,
      );
    }
    return li;
  };
  setChildren(
    panel,
    el('h2', { class: 'props-title' }, node.op_type),
    table([
      ['Name', node.name || '(none)'],
      ['Role', node.role],
      ['Domain', node.domain],
      ['Group', node.group || '(top level)'],
    ]),
    node.attributes.length
      ? section('Attributes', table(node.attributes.map((a) => [a.name, a.value])))
      : null,
    section('Inputs', el('ul', { class: 'plain' }, node.inputs.map(value))),
    section('Outputs', el('ul', { class: 'plain' }, node.outputs.map(value))),
    node.subgraphs.length ? section('Subgraphs', el('ul', { class: 'plain' }, node.subgraphs.map((s) => el('li', {}, s)))) : null,
    node.doc ? section('Documentation', el('p', {}, node.doc)) : null,
  );
}

export function renderGroup(panel, group, expanded, toggle) {
  setChildren(
    panel,
    el('h2', { class: 'props-title' }, group.label),
    table([
      ['Path', group.path],
      ['Ops', fmtInt(group.ops)],
      ['State', expanded ? 'expanded' : 'collapsed'],
    ]),
    el('p', {}, el('button', { type: 'button', class: 'btn', onclick: toggle }, expanded ? 'Collapse' : 'Expand')),
    section('Op types', table(Object.entries(group.op_types).map(([op, n]) => [op, fmtInt(n)]))),
  );
}

export function renderTensor(box, t) {
  const rows = [['Shape', fmtShape(t.shape)], ['Type', t.dtype || '?']];
  if (t.stats) {
    rows.push(['Min / max', `${t.stats.min.toPrecision(4)} / ${t.stats.max.toPrecision(4)}`]);
    rows.push(['Mean ± std', `${t.stats.mean.toPrecision(4)} ± ${t.stats.std.toPrecision(4)}`]);
  }
  const shown = t.values.map((v) => (typeof v === 'number' ? Number(v.toPrecision(5)) : v)).join(', ');
  setChildren(box, table(rows), el('pre', { class: 'values' }, `[${shown}${t.truncated ? ', …' : ''}]`));
}
