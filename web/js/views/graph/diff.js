// Model diff in the graph view. "Compare with…" picks the other model; /api/graph/diff gives
// the report (drawn by diffpanel.js); the other model is drawn beside the current one in a
// second canvas whose pan and zoom follow the first (and the other way round). Ops are
// coloured: removed (red) and changed (amber) on the left, added (green) and changed on the
// right; an op inside a collapsed group colours the group. The colours are marks of the
// drawing (stage.js), kept in its SVG export, so "Diff SVG" (both sides in one file) has them.
// The model compared with is kept in the URL (graph_compare), so a link reopens the diff.
// While it is open the two drawings have no minimap: it would cover half of each.
import * as state from '../../shared/state.js';
import { el, setChildren } from '../../shared/dom.js';
import { getJSON, postJSON, apiURL } from '../../shared/api.js';
import { GraphStage } from './stage.js';
import { svgEl } from './render.js';
import { exportSVG } from './download.js';
import { renderDiff } from './diffpanel.js';

export const DIFF_COLORS = { added: '#1a9e3f', removed: '#d62728', changed: '#f0a000' };
const GAP = 80; // px between the two drawings in the exported SVG
const TITLE = 30;

state.declare('graph_compare', ''); // the model compared with (its id), '' for none

export class GraphDiff {
  /**
   * host: {main(): the view's GraphStage, model(): the open model, models(): every model,
   * options(): drawing options, reveal(id): show an op of the open model, fail(err)}.
   */
  constructor(host) {
    this.host = host;
    this.body = null; // the /api/graph/diff answer shown
    this.other = null; // the model compared with
    this.expanded = null; // the other side's expanded groups
    this.seq = 0;
    this.select = el('select', { id: 'graph-compare', 'aria-label': 'Compare with', onchange: () => this.open(this.select.value) });
    this.jsonLink = el('a', { class: 'btn', id: 'graph-diff-json', hidden: true, download: 'graph-diff.json' }, 'Diff JSON');
    this.svgButton = el('button', { type: 'button', class: 'btn', id: 'graph-diff-svg', hidden: true, onclick: () => this.exportSVG() }, 'Diff SVG');
    this.element = el('span', { class: 'graph-compare' },
      el('label', { for: 'graph-compare', class: 'inline' }, 'Compare with… '), this.select, this.jsonLink, this.svgButton);
    this.report = el('section', { class: 'graph-diff', 'aria-label': 'Model diff', hidden: true, 'data-state': 'empty' });
    this.canvas = new GraphStage({ onActivate: (hit) => this.#activate(hit), onBackground: () => {} });
    this.canvas.svg.setAttribute('aria-label', 'The model compared with. Pan and zoom follow the left side.');
    this.canvas.setMinimap(false);
    // in the document only while a diff is open (one drawing otherwise, as before)
    this.pane = el('div', { class: 'graph-canvas graph-canvas-after' }, this.canvas.element);
  }

  /** The other models, as options (the open one is not one of them). */
  fillOptions() {
    const current = this.host.model();
    const options = this.host.models().filter((m) => !current || m.id !== current.id);
    setChildren(this.select, el('option', { value: '' }, '—'),
      options.map((m) => el('option', { value: m.id }, `${m.name} (${m.source})`)));
    this.select.value = this.other && options.some((m) => m.id === this.other.id) ? this.other.id : '';
  }

  /** Compare the open model with model `id` ('' closes the diff). */
  async open(id) {
    const seq = ++this.seq;
    const model = this.host.model();
    const other = this.host.models().find((m) => m.id === id);
    if (!model || !other) {
      this.close();
      return null;
    }
    this.other = other;
    this.select.value = id;
    state.set({ graph_compare: id });
    this.report.hidden = false;
    this.report.dataset.state = 'loading';
    setChildren(this.report, el('p', { class: 'muted' }, `Comparing ${model.name} with ${other.name}…`));
    const params = { model: model.id, other: id };
    try {
      const answers = await Promise.allSettled([
        getJSON('api/graph/diff', params),
        postJSON('api/graph/view', { model: id, expanded: 'initial', ...this.host.options() }),
      ]);
      const failed = answers.find((a) => a.status === 'rejected'); // the diff's says which side
      if (failed) throw failed.reason;
      const [body, view] = answers.map((a) => a.value);
      if (seq !== this.seq) return null;
      this.body = body;
      renderDiff(this.report, body, { select: (side, op) => this.#show(side, op) });
      this.jsonLink.href = apiURL('api/graph/diff', { ...params, download: 1 });
      this.jsonLink.hidden = false;
      this.svgButton.hidden = false;
      this.host.main().element.parentNode.after(this.pane);
      this.host.main().setMinimap(false);
      this.#drawOther(view);
      this.host.main().onTransform = (c) => this.#follow(c, this.canvas);
      this.canvas.onTransform = (c) => this.#follow(c, this.host.main());
      await this.host.main().fit(); // the left side is narrower now; the right one follows
      this.#follow(this.host.main(), this.canvas);
      this.paint();
      this.report.dataset.state = 'ready';
      return body;
    } catch (err) {
      if (seq !== this.seq) return null;
      this.report.dataset.state = 'error';
      setChildren(this.report, el('p', { class: 'graph-error', role: 'alert' }, `Cannot compare with ${other.name}: ${err.message}`));
      this.pane.remove();
      this.host.main().setMinimap(true);
      return null;
    }
  }

  close() {
    this.seq += 1;
    this.body = null;
    this.other = null;
    this.select.value = '';
    state.set({ graph_compare: '' });
    this.report.hidden = true;
    this.report.dataset.state = 'empty';
    this.pane.remove();
    this.jsonLink.hidden = true;
    this.svgButton.hidden = true;
    this.host.main().onTransform = null;
    this.host.main().setMinimap(true);
    this.unpaint(this.host.main());
  }

  #drawOther(view) {
    this.expanded = new Set(view.expanded);
    this.canvas.draw(view);
    this.canvas.state = 'ready';
  }

  /** Make `to` show what `from` shows (same scale and offset). */
  #follow(from, to) {
    const a = from.pz;
    const b = to.pz;
    if (a.k !== b.k || a.tx !== b.tx || a.ty !== b.ty) b.set(a.k, a.tx, a.ty);
  }

  /** Colour both drawings (again after either is redrawn). */
  paint() {
    if (!this.body) return;
    const b = this.body;
    this.#paintSide(this.host.main(), [
      ...b.removed.map((i) => [i.before, 'removed']), ...b.changed.map((i) => [i.before, 'changed'])]);
    this.#paintSide(this.canvas, [
      ...b.added.map((i) => [i.after, 'added']), ...b.changed.map((i) => [i.after, 'changed'])]);
  }

  #paintSide(canvas, items) {
    const marks = new Map(); // drawn id -> {status, color}
    for (const [ref, status] of items) {
      const id = canvas.has(ref.id) ? ref.id : drawnGroup(canvas, ref.group);
      if (!id) continue;
      const both = marks.has(id) && marks.get(id).status !== status ? 'changed' : status;
      marks.set(id, { status: both, color: DIFF_COLORS[both] });
    }
    canvas.setOutlines(marks);
  }

  /** Take the colours off a drawing. */
  unpaint(canvas) {
    canvas.setOutlines(null);
  }

  async #show(side, id) {
    if (side === 'before') {
      await this.host.reveal(id);
      return;
    }
    const item = this.canvas.data && this.canvas.data.nodes.find((n) => n.id === id);
    if (item) await this.canvas.centerOn(item);
  }

  /** A click on the other side: a collapsed group expands, a frame head collapses. */
  async #activate(hit) {
    const head = hit.type === 'head';
    let path = null;
    if (head) path = hit.path;
    else if (hit.id.startsWith('g:')) path = hit.id.slice(2);
    if (path === null || !this.other) return;
    const next = new Set(this.expanded);
    if (head) [...next].forEach((p) => { if (p === path || p.startsWith(`${path}/`)) next.delete(p); });
    else next.add(path);
    try {
      const view = await postJSON('api/graph/view', { model: this.other.id, expanded: [...next], ...this.host.options() });
      this.#drawOther(view);
      this.paint();
    } catch (err) {
      this.host.fail(err);
    }
  }

  /** Both drawings side by side, with their colours and the two models' names, as an SVG file. */
  exportSVG() {
    const main = this.host.main();
    if (!this.body || !main.data || !this.canvas.data) return;
    const [wa, ha] = [main.data.width, main.data.height];
    const [wb, hb] = [this.canvas.data.width, this.canvas.data.height];
    const content = svgEl('g');
    const side = (drawing, x, name) => {
      const g = svgEl('g', { transform: `translate(${x},0)` });
      g.append(svgEl('text', { x: 0, y: 16, 'font-size': 16, 'font-weight': 700, 'font-family': 'sans-serif', fill: '#222' }, name));
      drawing.setAttribute('transform', `translate(0,${TITLE})`);
      g.append(drawing);
      content.append(g);
    };
    side(main.drawingClone(), 0, this.body.before.name);
    side(this.canvas.drawingClone(), wa + GAP, this.body.after.name);
    exportSVG(content, wa + GAP + wb, Math.max(ha, hb) + TITLE, 'graph-diff.svg');
  }

  destroy() {
    this.seq += 1;
    this.canvas.destroy();
  }
}

/** The id of the deepest drawn collapsed group holding group path `path`, if any. */
function drawnGroup(canvas, path) {
  const parts = path ? path.split('/') : [];
  for (let n = parts.length; n > 0; n -= 1) {
    const id = `g:${parts.slice(0, n).join('/')}`;
    if (canvas.has(id)) return id;
  }
  return null;
}
