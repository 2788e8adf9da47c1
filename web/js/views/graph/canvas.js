// The graph's SVG canvas: one /api/graph/view answer drawn inside a pan/zoom viewport, with
// level of detail by zoom (far out, an overview of a big graph; otherwise only the tiles
// near the screen attached), fitting, keyboard pan and zoom, and export of the whole drawing.
import { drawGraph, drawOverview, graphDefs, svgEl, cullTiles } from './render.js';
import { PanZoom } from './panzoom.js';
import { exportSVG, exportPNG } from './download.js';

const OVERVIEW_MIN_NODES = 300; // graphs bigger than this draw an overview when zoomed far out
const OVERVIEW_BELOW = 0.2;
const PAN_STEP = 60; // px an arrow key pans

export class GraphCanvas {
  /** onActivate(element): a node or group frame was clicked or pressed (Enter, space);
   *  onBackground(): a click hit nothing. */
  constructor({ onActivate, onBackground }) {
    this.onActivate = onActivate;
    this.data = null; // the drawn /api/graph/view answer
    this.byId = new Map(); // node id -> its <g>
    this.svg = svgEl('svg', {
      class: 'graph-svg', tabindex: 0, role: 'application', 'data-state': 'empty',
      'aria-label': 'Model graph. Drag or arrow keys to pan, wheel or +/- to zoom, 0 to fit, 1 for actual size.',
    });
    this.viewport = svgEl('g', { class: 'viewport' });
    this.svg.append(graphDefs(), this.viewport);
    this.pz = new PanZoom(this.svg, this.viewport, { onZoom: (k) => this.#onTransform(k) });
    this.svg.addEventListener('click', (e) => {
      const hit = e.target.closest('.frame-head, .node');
      if (hit) onActivate(hit);
      else onBackground();
    });
    this.svg.addEventListener('keydown', (e) => this.#key(e));
  }

  /** 'empty' | 'loading' | 'ready' | 'error', as the svg's data-state says (tests wait on it). */
  get state() {
    return this.svg.dataset.state;
  }

  set state(value) {
    this.svg.dataset.state = value;
  }

  /** The drawn element of node `id`, if it is drawn. */
  node(id) {
    return this.byId.get(id);
  }

  draw(data) {
    this.data = data;
    ({ byId: this.byId, tiles: this.tiles, layers: this.layers } = drawGraph(this.viewport, data));
    this.overview = null;
    this.overviewShown = false;
    this.#onTransform(this.pz.k);
    this.svg.dataset.nodes = String(data.nodes.length);
  }

  /** After every pan/zoom frame: level of detail by zoom, and only nearby tiles drawn. */
  #onTransform(k) {
    if (this.onTransform) this.onTransform(this); // e.g. a diff's other side follows
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

  #key(e) {
    const target = e.target;
    if ((e.key === 'Enter' || e.key === ' ') && target !== this.svg) {
      e.preventDefault();
      this.onActivate(target);
      return;
    }
    const keys = {
      ArrowLeft: () => this.pz.panBy(PAN_STEP, 0), ArrowRight: () => this.pz.panBy(-PAN_STEP, 0),
      ArrowUp: () => this.pz.panBy(0, PAN_STEP), ArrowDown: () => this.pz.panBy(0, -PAN_STEP),
      '+': () => this.pz.zoomCenter(1.25), '=': () => this.pz.zoomCenter(1.25),
      '-': () => this.pz.zoomCenter(0.8), 0: () => this.fit(), 1: () => this.actualSize(),
    };
    const fn = keys[e.key];
    if (fn && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      fn();
    }
  }

  /**
   * Colour nodes by data: `styles` maps a drawn node id (as /api/graph/view names them) to
   * {fill: '#rrggbb', badge: 'text' (optional)}; a node not in the map keeps its category
   * colour; null clears every style. Attributes, not CSS, so an exported SVG keeps them.
   */
  setNodeStyle(styles) {
    for (const [id, g] of this.byId) {
      const style = styles ? styles.get(id) : null;
      const boxes = g.querySelectorAll(':scope > rect');
      for (const box of boxes) {
        if (box.dataset.fill === undefined) box.dataset.fill = box.getAttribute('fill');
        box.setAttribute('fill', style && style.fill ? style.fill : box.dataset.fill);
      }
      let badge = g.querySelector(':scope > text.badge');
      if (style && style.badge) {
        if (!badge) {
          const w = Number(boxes[boxes.length - 1].getAttribute('width'));
          badge = svgEl('text', { class: 'badge', x: w - 3, y: -3, 'text-anchor': 'end', 'font-size': 9, fill: '#1d2330' });
          g.append(badge);
        }
        badge.textContent = style.badge;
      } else if (badge) {
        badge.remove();
      }
    }
    this.styles = styles;
  }

  // ---- where the view is ---------------------------------------------------------------------
  /** Where node `id` is drawn now (to keep it in place across a redraw), or null. */
  position(id) {
    const item = this.data && this.data.nodes.find((n) => n.id === id);
    return item ? { x: item.x, y: item.y } : null;
  }

  /** Pan so that item `id` (a node or frame) is where it was at `before` (see position). */
  keepAnchor(id, before) {
    const after = this.data.nodes.find((n) => n.id === id) || this.data.frames.find((f) => f.id === id);
    if (!after) return;
    this.pz.set(this.pz.k, this.pz.tx + (before.x - after.x) * this.pz.k, this.pz.ty + (before.y - after.y) * this.pz.k);
  }

  /** The first view of a graph: all of it, or its beginning when that would be a speck. */
  initialView() {
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

  /** Bring node `item` ({x, y, w, h}) to the centre, zoomed in to at least 0.8. */
  centerOn(item) {
    return this.pz.centerOn(item.x + item.w / 2, item.y + item.h / 2, Math.max(this.pz.k, 0.8));
  }

  /** Time from a zoom step until the next frame has been drawn (for tests and benchmarks). */
  async zoomFrame(factor = 1.1) {
    const t0 = performance.now();
    await this.pz.zoomCenter(factor);
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    return performance.now() - t0;
  }

  // ---- export --------------------------------------------------------------------------------
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

  /** A copy of the whole drawing (every tile, no pan/zoom transform), e.g. to combine. */
  drawingClone() {
    return this.#withAllTiles(() => {
      const clone = this.viewport.cloneNode(true);
      clone.removeAttribute('transform');
      return clone;
    });
  }

  exportSVG(filename) {
    if (!this.data) return;
    this.#withAllTiles(() => exportSVG(this.viewport, this.data.width, this.data.height, filename));
  }

  /** The SVG text is taken synchronously, so the tiles are re-culled right after. */
  exportPNG(filename) {
    return this.#withAllTiles(() => exportPNG(this.viewport, this.data.width, this.data.height, filename));
  }

  destroy() {
    this.pz.destroy();
  }
}
