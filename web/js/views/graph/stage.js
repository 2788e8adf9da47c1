// Where a graph view is drawn: SVG (canvas.js) for views of a few thousand boxes, where it
// reads best and every box is an element, WebGL2 (glcanvas.js) above that, where SVG cannot
// keep up. The view, find and diff talk to this one object: it draws with the right one,
// keeps selection, find matches, diff outlines and node styles across redraws and renderer
// switches, carries the minimap and the live region, and exports SVG whichever draws.
import * as state from '../../shared/state.js';
import { el } from '../../shared/dom.js';
import { GraphCanvas } from './canvas.js';
import { GLCanvas } from './glcanvas.js';
import { Minimap } from './minimap.js';
import { drawGraph, drawingElements, drawingLayers, countElements, tileKey, svgEl, LAYER } from './render.js';
import { exportDrawingSVG, exportPNG } from './download.js';

// From this many boxes on, WebGL draws. SVG's cost grows with the boxes (bench/graph_frames.py:
// its drawing took 1.1x WebGL's at 500 boxes, 3.8x at 1,000, 8x at 2,000, 50x at 50,000, and
// its frames 2x at 10,000) while below a thousand it keeps up and reads best (the browser's
// text, an element per box). At 1,000 SVG made expanding a 1,000-op scope miss 150 ms.
export const WEBGL_FROM = 1000;

state.declare('graph_renderer', 'auto'); // 'auto' | 'webgl' | 'svg' (in the URL)

/** The SVG drawing's clicked element -> {type: 'head', path} | {type: 'node', id} | null. */
function svgHit(target) {
  const head = target.closest('.frame-head');
  if (head) return { type: 'head', path: head.parentNode.dataset.path };
  const node = target.closest('.node');
  return node ? { type: 'node', id: node.dataset.id } : null;
}

/**
 * Mark the SVG boxes of `byId` (id -> <g>): `outlines` (id -> css colour, the diff) as a 4 px
 * stroke, data-diff = `statuses`' value; `styles` (id -> {fill, badge}) as the box's fill and a
 * small text above its right corner. What is changed is remembered on the element so a later
 * call can put it back.
 */
function decorate(byId, outlines, statuses, styles) {
  for (const [id, color] of outlines) {
    const g = byId.get(id);
    if (g) outline(g, color, statuses.get(id));
  }
  for (const [id, style] of styles) {
    const g = byId.get(id);
    if (g) restyle(g, style);
  }
}

/** The diff's outline on box <g> `g` (decorate). */
function outline(g, color, status) {
  const box = g.querySelector('rect.box');
  if (!box) return;
  if (!g.dataset.stroke) g.dataset.stroke = `${box.getAttribute('stroke')} ${box.getAttribute('stroke-width')}`;
  g.dataset.diff = status || 'marked';
  box.setAttribute('stroke', color);
  box.setAttribute('stroke-width', '4');
}

/** A value's fill and badge on box <g> `g` (decorate). */
function restyle(g, style) {
  const box = g.querySelector('rect.box');
  if (!box || !style || !style.fill) return;
  if (!g.dataset.fill) g.dataset.fill = box.getAttribute('fill');
  box.setAttribute('fill', style.fill);
  if (style.badge) {
    const w = Number(box.getAttribute('width'));
    g.append(svgEl('text', { class: 'badge', x: w - 3, y: -3, 'text-anchor': 'end', 'font-size': 9, fill: '#1d2330' }, String(style.badge)));
  }
}

function undecorate(byId) {
  for (const g of byId.values()) {
    const box = g.querySelector('rect.box');
    if (!box) continue;
    if (g.dataset.stroke) {
      const [stroke, width] = g.dataset.stroke.split(' ');
      box.setAttribute('stroke', stroke);
      box.setAttribute('stroke-width', width);
      delete g.dataset.stroke;
      delete g.dataset.diff;
    }
    if (g.dataset.fill) {
      box.setAttribute('fill', g.dataset.fill);
      delete g.dataset.fill;
    }
    for (const badge of g.querySelectorAll(':scope > text.badge')) badge.remove();
  }
}

export class GraphStage {
  /** onActivate(hit): {type: 'node', id} or {type: 'head', path}; onBackground(). */
  constructor({ onActivate, onBackground }) {
    this.onActivate = onActivate;
    this.onBackground = onBackground;
    this.onTransform = null; // e.g. the diff's other side follows
    this.svgCanvas = new GraphCanvas({ onActivate: (t) => { const h = svgHit(t); if (h) onActivate(h); }, onBackground,
      announce: (t) => this.#announce(t) });
    this.svgCanvas.onTransform = () => this.#transformed();
    this.gl = null; // made on the first big view
    this.active = this.svgCanvas;
    this.selected = null;
    this.matches = [];
    this.current = null;
    this.outlines = new Map(); // id -> css colour
    this.statuses = new Map(); // id -> the diff's word for it
    this.styles = new Map(); // id -> {fill, badge}
    this.live = el('p', { class: 'visually-hidden', 'aria-live': 'polite' });
    this.note = el('p', { class: 'graph-note', role: 'note', hidden: true });
    this.minimap = new Minimap({ onMove: (x, y) => this.pz.centerOn(x, y) });
    this.minimapOn = true; // off: never shown (setMinimap)
    this.exportSliceMs = undefined; // an export's slices (download.js's default; tests make them small)
    this.element = el('div', { class: 'graph-stage', 'data-renderer': 'svg' },
      this.svgCanvas.svg, this.minimap.element, this.note, this.live);
  }

  // What tests and benchmarks read: the svg keeps data-state and data-nodes whichever draws.
  get svg() { return this.svgCanvas.svg; }

  get viewport() { return this.svgCanvas.viewport; }

  get pz() { return this.active.pz; }

  get data() { return this.active.data; }

  /** 'svg' or 'webgl': what draws the current view. */
  get renderer() { return this.active === this.gl ? 'webgl' : 'svg'; }

  get state() { return this.svgCanvas.state; }

  set state(value) {
    this.svgCanvas.state = value;
    this.element.dataset.state = value;
  }

  focus() {
    this.active.element.focus();
  }

  #announce(text) {
    this.live.textContent = text;
  }

  #transformed() {
    this.#updateMinimap();
    if (this.onTransform) this.onTransform(this);
  }

  #updateMinimap() {
    const a = this.active;
    if (this.minimapOn && a.data) this.minimap.update(a.pz.k, a.pz.tx, a.pz.ty, a.element.clientWidth, a.element.clientHeight);
  }

  /** Show the minimap while the drawing is bigger than the screen (`on`), or never (the
   *  diff's two half-width drawings: it would cover what they show). */
  setMinimap(on) {
    this.minimapOn = on;
    if (on) this.#updateMinimap();
    else this.minimap.element.hidden = true;
  }

  /** The WebGL drawing, made once; null (and a note saying so) where WebGL2 is missing. */
  #webgl() {
    if (this.gl || this.glFailed) return this.gl;
    try {
      this.gl = new GLCanvas({ onActivate: this.onActivate, onBackground: this.onBackground, announce: (t) => this.#announce(t) });
      this.gl.onTransform = () => this.#transformed();
      this.gl.element.style.display = 'none';
      this.element.insertBefore(this.gl.element, this.minimap.element);
    } catch (err) {
      this.glFailed = true;
      this.note.hidden = false;
      this.note.textContent = `WebGL2 is not available here (${err.message}): the graph is drawn as SVG, which gets slow past a few thousand boxes.`;
    }
    return this.gl;
  }

  /**
   * Ready the WebGL drawing while the page is idle, for a model whose views may need it
   * (`ops` >= WEBGL_FROM): software WebGL spends 150-200 ms on a context's first frame
   * (each program compiled for its state, the drawing buffer, the glyph texture), which the
   * first big expand would otherwise wait for. `data` (the view on screen) is drawn once
   * where nobody sees it.
   */
  prewarm(data, ops) {
    if (ops < WEBGL_FROM || this.gl || this.glFailed || state.get('graph_renderer') === 'svg') return;
    const idle = window.requestIdleCallback || ((fn) => setTimeout(fn, 100));
    idle(async () => {
      if (this.gl || this.glFailed || !data) return;
      const gl = this.#webgl();
      if (!gl) return;
      await gl.prewarm(data);
      if (this.active !== gl) {
        gl.element.style.display = 'none';
        gl.data = null;
      }
    }, { timeout: 1000 });
  }

  #wantsWebGL(data) {
    const choice = state.get('graph_renderer');
    if (choice === 'svg') return false;
    return choice === 'webgl' || data.nodes.length >= WEBGL_FROM;
  }

  /** Draw view `data` with the renderer that suits it, keeping the pan/zoom and the marks. */
  draw(data) {
    const next = this.#wantsWebGL(data) && this.#webgl() ? this.gl : this.svgCanvas;
    if (next !== this.active) {
      const { k, tx, ty } = this.active.pz;
      const was = this.active;
      this.active = next;
      next.pz.set(k, tx, ty);
      next.element.style.display = '';
      was.element.style.display = 'none';
      if (was === this.svgCanvas) {
        this.svgCanvas.viewport.replaceChildren(); // no stale SVG behind the WebGL drawing
        this.svgCanvas.data = null;
        this.svgCanvas.byId = new Map();
        this.svgCanvas.tiles = null;
      } else {
        was.data = null;
      }
      if (was.element.contains(document.activeElement)) next.element.focus({ preventScroll: true });
    }
    this.element.dataset.renderer = this.renderer;
    const started = performance.now();
    next.draw(data);
    this.drawMs = performance.now() - started; // what the drawing itself cost (benchmarks)
    this.svg.dataset.nodes = String(data.nodes.length);
    this.minimap.setData(data);
    this.#applyMarks();
    this.#transformed();
  }

  #applyMarks() {
    if (this.active === this.gl) {
      const { selected, outlines, styles, matches, current } = this;
      this.gl.setMarks({ selected, outlines, styles, matches, current });
      return;
    }
    const byId = this.svgCanvas.byId;
    undecorate(byId);
    decorate(byId, this.outlines, this.statuses, this.styles);
    this.svgCanvas.viewport.querySelectorAll('.node.match, .node.current, .node.selected')
      .forEach((g) => g.classList.remove('match', 'current', 'selected'));
    for (const id of this.matches) {
      const g = byId.get(id);
      if (g) g.classList.add('match');
    }
    if (this.current && byId.get(this.current)) byId.get(this.current).classList.add('current');
    if (this.selected && byId.get(this.selected)) byId.get(this.selected).classList.add('selected');
  }

  // ---- marks ---------------------------------------------------------------------------------
  /** Whether node `id` is drawn (not hidden in a collapsed group). */
  has(id) {
    return this.active === this.gl ? this.gl.has(id) : this.svgCanvas.byId.has(id);
  }

  setSelected(id) {
    this.selected = id;
    if (this.active === this.gl) this.gl.setSelected(id);
    else this.#applyMarks();
  }

  /** Find's matches (ids) and the current one. */
  setMatches(ids, current) {
    this.matches = ids;
    this.current = current;
    if (this.active === this.gl) this.gl.setMatches(ids, current);
    else this.#applyMarks();
  }

  /** The diff's marks: Map of drawn id -> {status, color}; null clears. */
  setOutlines(marks) {
    this.outlines = new Map();
    this.statuses = new Map();
    for (const [id, { status, color }] of marks || []) {
      this.outlines.set(id, color);
      this.statuses.set(id, status);
    }
    this.#applyMarks();
  }

  /**
   * Colour nodes by a value: `styles` is a Map (or object) of node id (as in /api/graph/view's
   * nodes) -> {fill: '#rrggbb', badge: 'text'}; null clears.
   */
  setNodeStyle(styles) {
    this.styles = styles instanceof Map ? styles : new Map(Object.entries(styles || {}));
    this.#applyMarks();
  }

  /** Give node `id` the keyboard focus (revealed by find or a link in the panel). */
  focusNode(id) {
    if (this.active === this.gl) {
      this.gl.element.focus({ preventScroll: true });
      this.gl.moveCursor(id);
      return;
    }
    const g = this.svgCanvas.node(id);
    if (g) g.focus({ preventScroll: true });
  }

  // ---- the view (the active drawing's) ------------------------------------------------------
  position(id) { return this.active.position(id); }

  keepAnchor(id, before) { return this.active.keepAnchor(id, before); }

  initialView() { return this.active.initialView(); }

  fit() { return this.active.fit(); }

  actualSize() { return this.active.actualSize(); }

  centerOn(item) { return this.active.centerOn(item); }

  zoomFrame(factor) { return this.active.zoomFrame(factor); }

  // ---- export: always SVG --------------------------------------------------------------------
  /** The whole drawing as SVG (a <g>, no pan/zoom transform), with the marks. */
  drawingClone() {
    if (this.active === this.svgCanvas) return this.svgCanvas.drawingClone();
    const root = svgEl('g', { class: 'viewport' });
    const { byId } = drawGraph(root, this.gl.data);
    decorate(byId, this.outlines, this.statuses, this.styles);
    return root;
  }

  /** The WebGL drawing's view as SVG elements (download.js svgParts' items), with the marks. */
  * #glElements(data) {
    const { outlines, statuses, styles } = this;
    for (const [layer, element, x0, y0, x1, y1] of drawingElements(data)) {
      if (layer === LAYER.nodes) {
        const id = element.dataset.id;
        if (outlines.has(id)) outline(element, outlines.get(id), statuses.get(id));
        if (styles.has(id)) restyle(element, styles.get(id));
      }
      yield [layer, tileKey(x0, y0, x1, y1), element, true];
    }
  }

  /** What an export serializes (download.js svgParts' `drawing`). */
  #exportDrawing() {
    if (this.active === this.svgCanvas) return this.svgCanvas.exportDrawing();
    const data = this.gl.data;
    return { viewport: svgEl('g', { class: 'viewport' }), layers: drawingLayers(), count: countElements(data), elements: this.#glElements(data) };
  }

  /** Save the drawing as an SVG file, built a slice at a time; onProgress(fraction done). */
  async exportSVG(filename, onProgress = null) {
    if (!this.data) return;
    const { width, height } = this.data;
    await exportDrawingSVG(this.#exportDrawing(), width, height, filename, { onProgress, sliceMs: this.exportSliceMs });
  }

  exportPNG(filename, onProgress = null) {
    const { width, height } = this.data;
    return exportPNG(this.#exportDrawing(), width, height, filename, { onProgress, sliceMs: this.exportSliceMs });
  }

  destroy() {
    this.svgCanvas.destroy();
    if (this.gl) this.gl.destroy();
  }
}
