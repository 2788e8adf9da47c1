// The tensors dashboard: a card per run × tag with a step slider. A small 0-, 1- or 2-D
// tensor is shown value by value (a table: rows by columns); a larger one as a histogram of
// its finite values with min, max and mean, both computed by /api/tensors/data.
import { registerView } from '../shared/views.js';
import { getJSON } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { el, setChildren, ensureStylesheet, fmtInt } from '../shared/dom.js';

const MAX_CELLS = 2000; // values drawn as table cells; the rest are summarized in a note

class TensorsView {
  constructor(ctx) {
    ensureStylesheet('tables-css', 'static/css/tables.css');
    this.grid = new RunTagGrid(ctx, {
      id: 'tensors', kind: 'tensor', noun: 'tensors', makeCard: (c) => this.#makeCard(c),
    });
    setChildren(ctx.settings, el('h2', {}, 'Tensors'), this.grid.syncControl());
    this.grid.layout();
  }

  #makeCard(cardCtx) {
    const { run, tag } = cardCtx;
    const box = el('div', { class: 'tensor-box' });
    const note = el('p', { class: 'card-note' });
    let asked = 0;
    let shown = null;
    const show = async (i, data) => {
      const key = `${data.steps[i]}@${data.wall_times[i]}`;
      if (key === shown) return;
      const ticket = ++asked;
      const body = await getJSON('api/tensors/data', { run, tag, step: data.steps[i] });
      if (ticket !== asked) return;
      shown = key;
      box.dataset.step = String(body.step);
      const shape = body.shape.length ? body.shape.join('×') : 'scalar';
      note.textContent = `${shape} · ${body.dtype} · ${fmtInt(body.size)} values`;
      setChildren(box, body.values ? valueTable(body) : histogram(body));
    };
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/tensors', { run, tag }),
      show,
      content: [box, note],
    });
  }
}

function valueTable({ values, shape }) {
  const cols = shape.length === 2 ? shape[1] : 1;
  const rows = shape.length === 2 ? shape[0] : values.length;
  const shownRows = Math.min(rows, Math.max(1, Math.floor(MAX_CELLS / Math.max(cols, 1))));
  const head = el('tr', {}, el('th', {}, ''), ...Array.from({ length: cols }, (_, j) => el('th', { scope: 'col' }, String(j))));
  const body = [];
  for (let i = 0; i < shownRows; i += 1) {
    const cells = Array.from({ length: cols }, (_, j) => el('td', {}, fmt(values[i * cols + j])));
    body.push(el('tr', {}, el('th', { scope: 'row' }, String(i)), ...cells));
  }
  const table = el('table', { class: 'tensor-values' }, el('thead', {}, head), el('tbody', {}, body));
  const more = shownRows < rows ? el('p', { class: 'card-note' }, `first ${fmtInt(shownRows)} of ${fmtInt(rows)} rows`) : null;
  return [el('div', { class: 'tensor-scroll' }, table), more];
}

function histogram({ histogram: h, stats }) {
  const top = Math.max(1, ...h.counts);
  const bars = h.counts.map((n, k) => el('div', {
    class: 'tensor-bar', style: { height: `${(100 * n) / top}%` },
    title: `${fmt(h.edges[k])} – ${fmt(h.edges[k + 1])}: ${fmtInt(n)}`,
  }));
  const line = `min ${fmt(stats.min)} · max ${fmt(stats.max)} · mean ${fmt(stats.mean)}` +
    (stats.nonfinite ? ` · ${fmtInt(stats.nonfinite)} non-finite` : '');
  return [el('div', { class: 'tensor-hist', role: 'img', 'aria-label': `histogram: ${line}` }, bars), el('p', { class: 'card-note' }, line)];
}

function fmt(v) {
  if (v === null || v === undefined) return '–';
  const x = Number(v);
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

registerView(runTagView({ id: 'tensors', label: 'Tensors', kind: 'tensor', order: 46, View: TensorsView, needsPlotly: false }));
