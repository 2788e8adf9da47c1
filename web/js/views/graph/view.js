// The model graph view: an ONNX graph with pan/zoom, name-scope groups that collapse and
// expand, find, a properties panel, and SVG/PNG export. Layout happens on the server
// (/api/graph/view, asked through viewfetch.js); this module picks the model, asks for what
// to show, and keeps the selection. The rest is beside it: the stage (stage.js) that draws a
// view as SVG (canvas.js, drawn by render.js) or, for big ones, with WebGL2 (glcanvas.js),
// both moved by panzoom.js, with a minimap (minimap.js); find (find.js), the toolbar and
// legend (toolbar.js), the properties panel (panel.js), export (download.js) and the diff
// with another model (diff.js). ../graph.js registers it.
import * as state from '../../shared/state.js';
import { getJSON, postForm } from '../../shared/api.js';
import { el, setChildren, ensureStylesheet, fmtInt } from '../../shared/dom.js';
import { GraphStage } from './stage.js';
import { GraphFind } from './find.js';
import { buildToolbar, legend, viewOptions } from './toolbar.js';
import { renderModel, renderNode, renderGroup, renderTensor } from './panel.js';
import { GraphDiff } from './diff.js';
import { GraphValues } from './values.js';
import { STYLESHEET, fetchModels, fetchSummary, fetchView, progressText } from './viewfetch.js';
// modules three imports down, named here as well: the browser fetches a module's imports once
// it has the module, so each level of imports costs a round trip before the first view
import './canvas.js';
import './glcanvas.js';
import './glrender.js';

export class GraphView {
  constructor(ctx) {
    this.ctx = ctx;
    this.models = [];
    this.model = null; // {id, name, ...}
    this.summary = null;
    this.expanded = null; // Set of expanded group paths (null: server's initial state)
    this.selected = null;
    this.seq = 0;
    this.cleanup = [];
    this.timings = { firstDrawn: null, lastRender: null };
    this.exporting = null; // the export under way (its kind), or null
    this.progress = null; // a pending layout's progress ({phase, done, total}), or null
    ensureStylesheet(STYLESHEET.id, STYLESHEET.href);
    this.#build();
    this.#bindKeys();
    window.__vdlGraph = this;
    this.loadModels();
  }

  // What tests and benchmarks read through window.__vdlGraph.
  get data() { return this.canvas.data; }

  get svg() { return this.canvas.svg; }

  get pz() { return this.canvas.pz; }

  // ---- DOM -----------------------------------------------------------------------------------
  #build() {
    this.canvas = new GraphStage({
      onActivate: (hit) => this.#activate(hit),
      onBackground: () => this.select(null),
    });
    this.finder = new GraphFind({
      canvas: this.canvas,
      model: () => this.model,
      reveal: (id, ancestors) => this.reveal(id, ancestors),
      onEscape: () => this.canvas.focus(),
      fail: (err) => this.#fail(err),
    });
    const toolbar = buildToolbar({
      selectModel: (id) => this.selectModel(id),
      upload: (input) => this.#upload(input),
      fit: () => this.fit(),
      actualSize: () => this.canvas.actualSize(),
      expand: (spec) => this.setExpanded(spec),
      reload: (opts) => this.reload(opts),
      exportSVG: () => this.exportSVG(),
      exportPNG: () => this.exportPNG(),
    }, this.finder.element);
    ({ modelSelect: this.modelSelect, status: this.status } = toolbar);
    this.differ = new GraphDiff({
      main: () => this.canvas, model: () => this.model, models: () => this.models, options: viewOptions,
      reveal: (id) => this.reveal(id), fail: (err) => this.#fail(err),
    });
    toolbar.element.insertBefore(this.differ.element, toolbar.status);
    this.values = new GraphValues({
      canvas: () => this.canvas, model: () => this.model, reveal: (id) => this.reveal(id),
      profiles: () => this.ctx.tagsOf('profile'),
    });
    toolbar.element.insertBefore(this.values.element, toolbar.status);
    this.error = el('p', { class: 'graph-error', role: 'alert', hidden: true });
    this.panel = el('div', { class: 'graph-props-body' });
    this.props = el('aside', { class: 'graph-props', 'aria-label': 'Properties' }, this.panel);
    this.empty = el('p', { class: 'empty', hidden: true });
    setChildren(
      this.ctx.main,
      el('div', { class: 'graph-view' }, toolbar.element, this.error, this.empty, this.differ.report,
        el('div', { class: 'graph-body' }, el('div', { class: 'graph-canvas' }, this.canvas.element), this.props)),
    );
    setChildren(this.ctx.settings, el('h2', {}, 'Graph'), legend(), this.values.panel);
  }

  #bindKeys() {
    const onKey = (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        this.finder.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    this.cleanup.push(() => document.removeEventListener('keydown', onKey));
  }

  /** A click, Enter or space on a group's frame head (collapse), a group box (expand) or a
   *  node: `hit` is {type: 'head', path} or {type: 'node', id}. */
  #activate(hit) {
    if (hit.type === 'head') {
      this.toggleGroup(hit.path, false);
      return;
    }
    if (hit.id.startsWith('g:')) this.toggleGroup(hit.id.slice(2), true);
    else this.select(hit.id);
  }

  // ---- models --------------------------------------------------------------------------------
  async loadModels() {
    try {
      const body = await fetchModels();
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
    const compare = state.get('graph_compare'); // (selectModel closes any diff)
    if (!this.model || this.model.id !== pick.id) await this.selectModel(pick.id);
    // the diff the URL names, reopened (a link reproduces it)
    if (compare && compare !== pick.id && this.model === pick && !this.differ.other
        && this.models.some((m) => m.id === compare)) await this.differ.open(compare);
  }

  #fillModelSelect() {
    const current = this.model ? this.model.id : state.get('graph_model');
    setChildren(this.modelSelect, this.models.map((m) => el('option', { value: m.id }, `${m.name} (${m.source})`)));
    if (current) this.modelSelect.value = current;
    this.differ.fillOptions();
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
    this.finder.reset();
    this.differ.close();
    this.differ.fillOptions();
    // the summary once the first view is in (fetchSummary): the view is what is drawn first
    this.summary = null;
    const drawn = this.reload({ fit: true });
    const summary = fetchSummary(id, drawn).then((body) => {
      if (this.model !== model) return;
      this.summary = body;
      renderModel(this.panel, body, model);
      this.#renderStatus();
    }, (err) => this.#fail(err));
    await Promise.all([summary, drawn]);
    if (this.model === model && this.summary && this.data) this.canvas.prewarm(this.data, this.summary.counts.nodes);
    await this.values.load(); // after the first draw: it may reveal (select) a node
  }

  async #upload(input) {
    const file = input.files[0];
    input.value = '';
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
      // the status says what is shown again (the model before, or nothing)
      this.status.textContent = '';
      this.#renderStatus();
    }
  }

  // ---- view ----------------------------------------------------------------------------------
  /** Fetch and draw the current state. `anchor`: keep this item where it is on screen. */
  async reload({ fit = false, anchor = null, expanded } = {}) {
    if (!this.model) return null;
    const seq = ++this.seq;
    const spec = expanded !== undefined ? expanded : this.expanded ? [...this.expanded] : 'initial';
    this.canvas.state = 'loading';
    const started = performance.now();
    let data;
    try {
      data = await fetchView({ model: this.model.id, expanded: spec, ...viewOptions() }, {
        stale: () => seq !== this.seq || this.destroyed,
        onProgress: (p) => {
          this.progress = p;
          this.status.textContent = progressText(p);
        },
      });
    } catch (err) {
      if (seq === this.seq) {
        this.progress = null;
        this.#fail(err);
      }
      return null;
    }
    if (!data || seq !== this.seq || this.destroyed) return null;
    this.#clearError();
    const before = anchor ? this.canvas.position(anchor) : null;
    this.expanded = new Set(data.expanded);
    this.#draw(data);
    if (fit) this.canvas.initialView();
    else if (before) this.canvas.keepAnchor(anchor, before);
    this.canvas.state = 'ready';
    this.timings.lastRender = performance.now() - started;
    if (this.timings.firstDrawn === null) this.timings.firstDrawn = performance.now();
    return data;
  }

  #draw(data) {
    this.progress = null;
    this.canvas.draw(data);
    this.finder.mark();
    this.differ.paint();
    this.values.paint();
    this.canvas.setSelected(this.selected);
    this.#renderStatus();
  }

  #renderStatus() {
    const data = this.data;
    if (!data || this.progress) return;
    const ops = this.summary ? this.summary.counts.nodes : 0;
    const shownOps = data.nodes.filter((n) => n.type === 'op').length;
    const groups = data.nodes.filter((n) => n.type === 'group').length;
    this.status.textContent = `${fmtInt(shownOps)} of ${fmtInt(ops)} ops shown${groups ? `, ${fmtInt(groups)} collapsed groups` : ''}`;
  }

  fit() {
    return this.canvas.fit();
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
    if (id && !this.canvas.has(id)) {
      await this.reveal(id);
      return;
    }
    this.selected = id;
    this.canvas.setSelected(id);
    if (!id) {
      if (this.summary) renderModel(this.panel, this.summary, this.model);
      return;
    }
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
    await this.canvas.centerOn(item);
    await this.select(id);
    this.canvas.focusNode(id);
  }

  // ---- export --------------------------------------------------------------------------------
  #fileBase() {
    const name = this.model ? this.model.name : 'graph';
    return name.replace(/\.onnx$/i, '').replace(/[^\w.-]+/g, '_') || 'graph';
  }

  /** Save the view as an SVG file: built a slice at a time, the status line saying how far
   *  (a 100,000-op view is a file of 100 MB and more); resolves once it is saved. */
  exportSVG() {
    return this.#export('SVG', (name, onProgress) => this.canvas.exportSVG(`${name}.svg`, onProgress));
  }

  exportPNG() {
    return this.#export('PNG', (name, onProgress) => this.canvas.exportPNG(`${name}.png`, onProgress));
  }

  async #export(kind, run) {
    if (!this.data || this.exporting) return null; // one at a time
    this.exporting = kind;
    const show = (done) => {
      this.status.textContent = `Exporting ${kind}… ${Math.floor(done * 100)}%`;
    };
    show(0);
    try {
      return await run(this.#fileBase(), show);
    } catch (err) {
      this.#fail(err);
      return null;
    } finally {
      this.exporting = null;
      this.status.textContent = '';
      this.#renderStatus();
    }
  }

  // ---- errors and lifecycle ----------------------------------------------------------------
  #fail(err, prefix = '') {
    this.error.hidden = false;
    this.error.textContent = `${prefix}${err && err.message ? err.message : String(err)}`;
    if (this.canvas.state === 'loading') this.canvas.state = 'error';
  }

  #clearError() {
    this.error.hidden = true;
    this.error.textContent = '';
  }

  /** Open the diff with model `id` (the "Compare with…" choice; for tests and benchmarks). */
  compareWith(id) {
    return this.differ.open(id);
  }

  /** Time from a zoom step until the next frame has been drawn (for tests and benchmarks). */
  zoomFrame(factor = 1.1) {
    return this.canvas.zoomFrame(factor);
  }

  /** 'svg' or 'webgl': what draws the view now (for tests and benchmarks). */
  get renderer() {
    return this.canvas.renderer;
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
    this.canvas.destroy();
    this.differ.destroy();
    if (window.__vdlGraph === this) delete window.__vdlGraph;
  }
}
