// The model graph view: an ONNX graph as SVG with pan/zoom, name-scope groups that
// collapse and expand, find, a properties panel, and SVG/PNG export. Layout happens on the
// server (/api/graph/view); this module draws and handles input.
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, postJSON, postForm } from '../shared/api.js';
import { el, setChildren, debounce, fmtInt } from '../shared/dom.js';
import { drawGraph, drawOverview, graphDefs, svgEl, cullTiles } from './graph/render.js';
import { PanZoom } from './graph/panzoom.js';
import { colorsOf } from './graph/colors.js';
import { exportSVG, exportPNG } from './graph/export.js';
import { renderModel, renderNode, renderGroup, renderTensor } from './graph/panel.js';

state.declare('graph_model', '');
state.declare('graph_dir', 'TB');
state.declare('graph_attrs', false);
state.declare('graph_inits', false);

// Whether the server was started with --model: then the tab shows even without logs. Asked
// once, before the shell first decides which tabs exist (top-level await).
let modelsGiven = false;
try {
  modelsGiven = (await getJSON('api/graph/models')).models.length > 0;
} catch (_) {
  modelsGiven = false;
}

function ensureStylesheet() {
  if (document.getElementById('graph-css')) return;
  document.head.append(el('link', { id: 'graph-css', rel: 'stylesheet', href: 'static/css/graph.css' }));
}

const OVERVIEW_MIN_NODES = 300; // graphs bigger than this draw an overview when zoomed far out
const OVERVIEW_BELOW = 0.2;

class GraphView {
  constructor(ctx) {
    this.ctx = ctx;
    this.models = [];
    this.model = null; // {id, name, ...}
    this.summary = null;
    this.data = null; // the drawn /api/graph/view answer
    this.expanded = null; // Set of expanded group paths (null: server's initial state)
    this.selected = null;
    this.matches = [];
    this.matchIndex = -1;
    this.byId = new Map();
    this.seq = 0;
    this.cleanup = [];
    this.timings = { firstDrawn: null, lastRender: null };
    ensureStylesheet();
    this.#build();
    this.#bindKeys();
    window.__vdlGraph = this;
    this.loadModels();
  }

  // ---- DOM -----------------------------------------------------------------------------------
  #build() {
    const button = (label, onclick, attrs = {}) => el('button', { type: 'button', class: 'btn', onclick, ...attrs }, label);
    this.modelSelect = el('select', { id: 'graph-model', 'aria-label': 'Model', onchange: () => this.selectModel(this.modelSelect.value) });
    this.fileInput = el('input', { type: 'file', accept: '.onnx,application/octet-stream', hidden: true, id: 'graph-file', onchange: () => this.#upload() });
    this.findInput = el('input', {
      type: 'search', id: 'graph-find', placeholder: 'Find (Ctrl+F): name, op, tensor',
      'aria-label': 'Find nodes by name, op type or tensor name', autocomplete: 'off', spellcheck: 'false',
    });
    this.findCount = el('span', { class: 'find-count', 'aria-live': 'polite' });
    const runFind = debounce(() => this.find(this.findInput.value), 200);
    this.findInput.addEventListener('input', runFind);
    this.findInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.nextMatch(e.shiftKey ? -1 : 1);
      } else if (e.key === 'Escape') {
        this.findInput.value = '';
        this.find('');
        this.svg.focus();
      }
    });
    const check = (key, label, id) => {
      const input = el('input', { type: 'checkbox', id });
      input.checked = state.get(key);
      input.addEventListener('change', () => {
        state.set({ [key]: input.checked });
        this.reload();
      });
      return el('label', { class: 'inline', for: id }, input, ` ${label}`);
    };
    this.horizontal = el('input', { type: 'checkbox', id: 'graph-horizontal' });
    this.horizontal.checked = state.get('graph_dir') === 'LR';
    this.horizontal.addEventListener('change', () => {
      state.set({ graph_dir: this.horizontal.checked ? 'LR' : 'TB' });
      this.reload({ fit: true });
    });
    this.status = el('span', { class: 'graph-status', role: 'status', 'aria-live': 'polite' });
    this.error = el('p', { class: 'graph-error', role: 'alert', hidden: true });
    const toolbar = el(
      'div',
      { class: 'graph-toolbar', role: 'toolbar', 'aria-label': 'Graph tools' },
      el('label', { for: 'graph-model', class: 'inline' }, 'Model '), this.modelSelect,
      button('Upload…', () => this.fileInput.click(), { id: 'graph-upload', title: 'Open an .onnx file' }), this.fileInput,
      el('span', { class: 'find' }, this.findInput,
        button('↑', () => this.nextMatch(-1), { 'aria-label': 'Previous match' }),
        button('↓', () => this.nextMatch(1), { 'aria-label': 'Next match' }), this.findCount),
      button('Fit', () => this.fit(), { id: 'graph-fit', title: 'Fit to screen (0)' }),
      button('100%', () => this.actualSize(), { id: 'graph-actual', title: 'Actual size (1)' }),
      button('Expand all', () => this.setExpanded('all'), { id: 'graph-expand-all' }),
      button('Collapse all', () => this.setExpanded('none'), { id: 'graph-collapse-all' }),
      check('graph_attrs', 'Attributes', 'graph-attrs'),
      check('graph_inits', 'Weights', 'graph-inits'),
      el('label', { class: 'inline', for: 'graph-horizontal' }, this.horizontal, ' Horizontal'),
      button('Export SVG', () => this.exportSVG(), { id: 'graph-export-svg' }),
      button('Export PNG', () => this.exportPNG(), { id: 'graph-export-png' }),
      this.status,
    );
    this.svg = svgEl('svg', {
      class: 'graph-svg', tabindex: 0, role: 'application', 'data-state': 'empty',
      'aria-label': 'Model graph. Drag or arrow keys to pan, wheel or +/- to zoom, 0 to fit, 1 for actual size.',
    });
    this.viewport = svgEl('g', { class: 'viewport' });
    this.svg.append(graphDefs(), this.viewport);
    this.panel = el('div', { class: 'graph-props-body' });
    this.props = el('aside', { class: 'graph-props', 'aria-label': 'Properties' }, this.panel);
    this.empty = el('p', { class: 'empty', hidden: true });
    setChildren(
      this.ctx.main,
      el('div', { class: 'graph-view' }, toolbar, this.error, this.empty,
        el('div', { class: 'graph-body' }, el('div', { class: 'graph-canvas' }, this.svg), this.props)),
    );
    setChildren(this.ctx.settings, el('h2', {}, 'Graph'), this.#legend());
    this.pz = new PanZoom(this.svg, this.viewport, { onZoom: (k) => this.#onTransform(k) });
    this.svg.addEventListener('click', (e) => this.#click(e));
    this.svg.addEventListener('keydown', (e) => this.#svgKey(e));
  }

  /** After every pan/zoom frame: level of detail by zoom, and only nearby tiles drawn. */
  #onTransform(k) {
    this.svg.classList.toggle('far', k < 0.45);
    if (!this.tiles) return;
    const many = this.data && this.data.nodes.length > OVERVIEW_MIN_NODES;
    this.#setOverview(many && k < OVERVIEW_BELOW);
    if (this.overviewShown) return;
    const r = this.svg.getBoundingClientRect();
    const [x0, y0] = this.pz.toGraph(r.left, r.top);
    const [x1, y1] = this.pz.toGraph(r.right, r.bottom);
    const mx = (x1 - x0) * 0.5;
    const my = (y1 - y0) * 0.5;
    cullTiles(this.tiles, [x0 - mx, y0 - my, x1 + mx, y1 + my]);
  }

  /** Swap the detailed drawing for the overview (far zoom on a big graph) and back. */
  #setOverview(on) {
    if (on === Boolean(this.overviewShown)) return;
    this.overviewShown = on;
    if (on) {
      if (!this.overview) this.overview = drawOverview(this.data);
      this.viewport.replaceChildren(this.overview);
    } else {
      this.viewport.replaceChildren(...this.layers);
    }
    this.svg.dataset.overview = on ? '1' : '0';
  }

  #legend() {
    const cats = ['layer', 'activation', 'pool', 'normalization', 'math', 'shape', 'control', 'constant', 'quantization', 'group'];
    // swatch colors from colors.js, the one table the drawing and the export use too
    return el('ul', { class: 'graph-legend plain' }, cats.map((c) => el('li', {}, el('span', { class: `swatch cat-${c}`, style: { background: colorsOf(c)[0] } }), ` ${c}`)));
  }

  #bindKeys() {
    const onKey = (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        this.findInput.focus();
        this.findInput.select();
      }
    };
    document.addEventListener('keydown', onKey);
    this.cleanup.push(() => document.removeEventListener('keydown', onKey));
  }

  #svgKey(e) {
    const target = e.target;
    if ((e.key === 'Enter' || e.key === ' ') && target !== this.svg) {
      e.preventDefault();
      this.#activate(target);
      return;
    }
    const step = 60;
    const keys = {
      ArrowLeft: () => this.pz.panBy(step, 0), ArrowRight: () => this.pz.panBy(-step, 0),
      ArrowUp: () => this.pz.panBy(0, step), ArrowDown: () => this.pz.panBy(0, -step),
      '+': () => this.pz.zoomCenter(1.25), '=': () => this.pz.zoomCenter(1.25),
      '-': () => this.pz.zoomCenter(0.8), 0: () => this.fit(), 1: () => this.actualSize(),
    };
    const fn = keys[e.key];
    if (fn && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      fn();
    }
  }

  #click(e) {
    const hit = e.target.closest('.frame-head, .node');
    if (!hit) {
      this.select(null);
      return;
    }
    this.#activate(hit);
  }

  #activate(target) {
    const head = target.closest('.frame-head');
    if (head) {
      this.toggleGroup(head.parentNode.dataset.path, false);
      return;
    }
    const node = target.closest('.node');
    if (!node) return;
    const id = node.dataset.id;
    if (id.startsWith('g:')) this.toggleGroup(id.slice(2), true);
    else this.select(id);
  }

  // ---- models --------------------------------------------------------------------------------
  async loadModels() {
    try {
      const body = await getJSON('api/graph/models');
      this.models = body.models;
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.#fillModelSelect();
    const wanted = state.get('graph_model');
    const pick = this.models.find((m) => m.id === wanted) || this.models[0];
    if (!pick) {
      this.empty.hidden = false;
      this.empty.textContent = 'No model yet: start visualdl with --model, log one with add_graph, or upload an .onnx file.';
      return;
    }
    if (!this.model || this.model.id !== pick.id) await this.selectModel(pick.id);
  }

  #fillModelSelect() {
    const current = this.model ? this.model.id : state.get('graph_model');
    setChildren(this.modelSelect, this.models.map((m) => el('option', { value: m.id }, `${m.name} (${m.source})`)));
    if (current) this.modelSelect.value = current;
  }

  async selectModel(id) {
    const model = this.models.find((m) => m.id === id);
    if (!model) return;
    this.model = model;
    this.modelSelect.value = id;
    state.set({ graph_model: id });
    this.empty.hidden = true;
    this.expanded = null;
    this.selected = null;
    this.matches = [];
    this.findCount.textContent = '';
    // summary and view in parallel: the server parses the model once for both
    const summary = getJSON('api/graph/summary', { model: id }).then((body) => {
      if (this.model !== model) return;
      this.summary = body;
      renderModel(this.panel, body, model);
      this.#renderStatus();
    }, (err) => this.#fail(err));
    this.summary = null;
    await Promise.all([summary, this.reload({ fit: true })]);
  }

  async #upload() {
    const file = this.fileInput.files[0];
    this.fileInput.value = '';
    if (!file) return;
    const form = new FormData();
    form.append('file', file, file.name);
    this.status.textContent = `Uploading ${file.name}…`;
    try {
      const body = await postForm('api/graph/upload', form);
      this.#clearError();
      this.models = this.models.filter((m) => m.id !== body.model.id).concat([body.model]);
      this.#fillModelSelect();
      await this.selectModel(body.model.id);
    } catch (err) {
      this.#fail(err, `Could not open ${file.name}: `);
    }
  }

  // ---- view ----------------------------------------------------------------------------------
  options() {
    return { direction: state.get('graph_dir'), attrs: state.get('graph_attrs'), inits: state.get('graph_inits') };
  }

  /** Fetch and draw the current state. `anchor`: keep this item where it is on screen. */
  async reload({ fit = false, anchor = null, expanded } = {}) {
    if (!this.model) return null;
    const seq = ++this.seq;
    const spec = expanded !== undefined ? expanded : this.expanded ? [...this.expanded] : 'initial';
    this.svg.dataset.state = 'loading';
    const started = performance.now();
    let data;
    try {
      data = await postJSON('api/graph/view', { model: this.model.id, expanded: spec, ...this.options() });
    } catch (err) {
      if (seq === this.seq) this.#fail(err);
      return null;
    }
    if (seq !== this.seq || this.destroyed) return null;
    this.#clearError();
    const before = anchor ? this.#screenBox(anchor) : null;
    this.expanded = new Set(data.expanded);
    this.data = data;
    this.#draw();
    if (fit) this.#initialView();
    else if (before) this.#keepAnchor(anchor, before);
    this.svg.dataset.state = 'ready';
    this.timings.lastRender = performance.now() - started;
    if (this.timings.firstDrawn === null) this.timings.firstDrawn = performance.now();
    return data;
  }

  #draw() {
    const data = this.data;
    ({ byId: this.byId, tiles: this.tiles, layers: this.layers } = drawGraph(this.viewport, data));
    this.overview = null;
    this.overviewShown = false;
    this.#onTransform(this.pz.k);
    this.svg.dataset.nodes = String(data.nodes.length);
    this.#markMatches();
    if (this.selected && this.byId.has(this.selected)) this.byId.get(this.selected).classList.add('selected');
    this.#renderStatus();
  }

  #renderStatus() {
    const data = this.data;
    if (!data) return;
    const ops = this.summary ? this.summary.counts.nodes : 0;
    const shownOps = data.nodes.filter((n) => n.type === 'op').length;
    const groups = data.nodes.filter((n) => n.type === 'group').length;
    this.status.textContent = `${fmtInt(shownOps)} of ${fmtInt(ops)} ops shown${groups ? `, ${fmtInt(groups)} collapsed groups` : ''}`;
  }

  #screenBox(id) {
    const item = this.data && this.data.nodes.find((n) => n.id === id);
    return item ? { x: item.x, y: item.y } : null;
  }

  #keepAnchor(id, before) {
    const after = this.data.nodes.find((n) => n.id === id) || this.data.frames.find((f) => f.id === id);
    if (!after) return;
    this.pz.set(this.pz.k, this.pz.tx + (before.x - after.x) * this.pz.k, this.pz.ty + (before.y - after.y) * this.pz.k);
  }

  #initialView() {
    const { width, height } = this.data;
    const r = this.svg.getBoundingClientRect();
    const k = Math.min(1, (r.width - 20) / width, (r.height - 20) / height);
    if (k >= 0.5) {
      this.pz.fit(width, height);
    } else {
      // a tall or wide graph: start readable at its beginning rather than as a speck
      const kk = 0.75;
      const horizontal = this.data.direction === 'LR';
      this.pz.set(kk, horizontal ? 10 : Math.max(10, (r.width - width * kk) / 2), horizontal ? Math.max(10, (r.height - height * kk) / 2) : 10);
    }
  }

  fit() {
    if (this.data) return this.pz.fit(this.data.width, this.data.height, 2);
    return null;
  }

  actualSize() {
    const r = this.svg.getBoundingClientRect();
    const [x, y] = this.pz.toGraph(r.left + r.width / 2, r.top + r.height / 2);
    return this.pz.centerOn(x, y, 1);
  }

  async setExpanded(spec) {
    await this.reload({ fit: true, expanded: spec });
  }

  async toggleGroup(path, expand) {
    if (!this.expanded) return;
    const next = new Set(this.expanded);
    if (expand) next.add(path);
    else [...next].forEach((p) => { if (p === path || p.startsWith(`${path}/`)) next.delete(p); });
    this.expanded = next;
    await this.reload({ anchor: `g:${path}` });
    this.#showGroup(path);
  }

  async #showGroup(path) {
    try {
      const group = await getJSON('api/graph/node', { model: this.model.id, id: `g:${path}` });
      if (this.destroyed) return;
      renderGroup(this.panel, group, this.expanded.has(path), () => this.toggleGroup(path, !this.expanded.has(path)));
    } catch (err) {
      this.#fail(err);
    }
  }

  // ---- selection and properties ------------------------------------------------------------
  async select(id) {
    if (this.selected && this.byId.has(this.selected)) this.byId.get(this.selected).classList.remove('selected');
    this.selected = id;
    if (!id) {
      if (this.summary) renderModel(this.panel, this.summary, this.model);
      return;
    }
    const g = this.byId.get(id);
    if (!g) {
      await this.reveal(id);
      return;
    }
    g.classList.add('selected');
    try {
      const node = await getJSON('api/graph/node', { model: this.model.id, id });
      if (this.destroyed || this.selected !== id) return;
      renderNode(this.panel, node, {
        select: (other) => this.reveal(other),
        showTensor: (name, box) => this.#showTensor(name, box),
      });
    } catch (err) {
      this.#fail(err);
    }
  }

  async #showTensor(name, box) {
    try {
      renderTensor(box, await getJSON('api/graph/tensor', { model: this.model.id, name }));
    } catch (err) {
      setChildren(box, el('p', { class: 'graph-error' }, err.message));
    }
  }

  /** Expand whatever hides node `id`, then select it and bring it into view. */
  async reveal(id, ancestors = null) {
    let chain = ancestors;
    if (!chain) {
      try {
        chain = (await getJSON('api/graph/node', { model: this.model.id, id })).ancestors;
      } catch (err) {
        this.#fail(err);
        return;
      }
    }
    const missing = chain.filter((p) => !this.expanded.has(p));
    if (missing.length) {
      missing.forEach((p) => this.expanded.add(p));
      await this.reload();
    }
    const item = this.data.nodes.find((n) => n.id === id);
    if (!item) return;
    await this.pz.centerOn(item.x + item.w / 2, item.y + item.h / 2, Math.max(this.pz.k, 0.8));
    await this.select(id);
    const g = this.byId.get(id);
    if (g) g.focus({ preventScroll: true });
  }

  // ---- find ----------------------------------------------------------------------------------
  async find(text) {
    if (!this.model) return;
    const q = text.trim();
    if (!q) {
      this.matches = [];
      this.matchIndex = -1;
      this.findCount.textContent = '';
      this.#markMatches();
      return;
    }
    try {
      const res = await getJSON('api/graph/search', { model: this.model.id, q, limit: 500 });
      if (this.findInput.value.trim() !== q) return;
      this.matches = res.matches;
      this.matchIndex = -1;
      this.findCount.textContent = res.total ? `${fmtInt(res.total)} found` : 'no match';
      this.#markMatches();
    } catch (err) {
      this.#fail(err);
    }
  }

  async nextMatch(step) {
    if (this.findInput.value.trim() && !this.matches.length) await this.find(this.findInput.value);
    if (!this.matches.length) return;
    const n = this.matches.length;
    this.matchIndex = (this.matchIndex + step + n) % n;
    const match = this.matches[this.matchIndex];
    this.findCount.textContent = `${this.matchIndex + 1} / ${fmtInt(n)}`;
    await this.reveal(match.id, match.ancestors);
    this.#markMatches();
    this.findInput.focus();
  }

  #markMatches() {
    this.viewport.querySelectorAll('.node.match, .node.current').forEach((g) => g.classList.remove('match', 'current'));
    const current = this.matchIndex >= 0 ? this.matches[this.matchIndex] : null;
    for (const m of this.matches) {
      const g = this.byId.get(m.id);
      if (g) g.classList.add('match');
    }
    if (current && this.byId.has(current.id)) this.byId.get(current.id).classList.add('current');
  }

  // ---- export --------------------------------------------------------------------------------
  #fileBase() {
    const name = this.model ? this.model.name : 'graph';
    return name.replace(/\.onnx$/i, '').replace(/[^\w.-]+/g, '_') || 'graph';
  }

  /** Run `fn` with every tile attached (an export must contain the whole graph). */
  #withAllTiles(fn) {
    this.#setOverview(false);
    if (this.tiles) cullTiles(this.tiles, [-Infinity, -Infinity, Infinity, Infinity]);
    try {
      return fn();
    } finally {
      this.#onTransform(this.pz.k);
    }
  }

  exportSVG() {
    if (!this.data) return;
    this.#withAllTiles(() => exportSVG(this.viewport, this.data.width, this.data.height, `${this.#fileBase()}.svg`));
  }

  async exportPNG() {
    if (!this.data) return null;
    try {
      // the SVG text is taken synchronously, so the tiles are re-culled right after
      return await this.#withAllTiles(() => exportPNG(this.viewport, this.data.width, this.data.height, `${this.#fileBase()}.png`));
    } catch (err) {
      this.#fail(err);
      return null;
    }
  }

  // ---- errors and lifecycle ----------------------------------------------------------------
  #fail(err, prefix = '') {
    this.error.hidden = false;
    this.error.textContent = `${prefix}${err && err.message ? err.message : String(err)}`;
    if (this.svg.dataset.state === 'loading') this.svg.dataset.state = 'error';
  }

  #clearError() {
    this.error.hidden = true;
    this.error.textContent = '';
  }

  /** Time from a zoom step until the next frame has been drawn (for tests and benchmarks). */
  async zoomFrame(factor = 1.1) {
    const t0 = performance.now();
    await this.pz.zoomCenter(factor);
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    return performance.now() - t0;
  }

  update(change) {
    if (change.data) {
      // new logged graphs may have arrived; keep what is open
      getJSON('api/graph/models').then((body) => {
        if (this.destroyed) return;
        const known = new Set(this.models.map((m) => m.id));
        const uploads = this.models.filter((m) => m.source === 'upload');
        this.models = body.models.concat(uploads.filter((m) => !body.models.some((b) => b.id === m.id)));
        if (this.models.some((m) => !known.has(m.id))) this.#fillModelSelect();
        if (!this.model && this.models.length) this.selectModel(this.models[0].id);
      }, () => {});
    }
  }

  destroy() {
    this.destroyed = true; // answers still in flight are dropped
    this.cleanup.forEach((fn) => fn());
    this.pz.destroy();
    if (window.__vdlGraph === this) delete window.__vdlGraph;
  }
}

registerView(classView({
  id: 'graph',
  label: 'Graph',
  kind: 'graph',
  order: 80,
  needsPlotly: false, // drawn as SVG: the tab need not wait for plotly.js
  available: () => modelsGiven,
  View: GraphView,
}));
