// The graph's SVG canvas: one /api/graph/view answer drawn inside a pan/zoom viewport, with
// level of detail by zoom (far out, an overview of a big graph; otherwise only the tiles
// near the screen attached), fitting, keyboard pan and zoom, and export of the whole drawing.
import { drawGraph, drawOverview, graphDefs, svgEl, cullTiles } from './render.js';
import { PanZoom } from './panzoom.js';
import { exportSVG, exportPNG } from './download.js';
import { Drawing } from './drawing.js';

const OVERVIEW_MIN_NODES = 300; // graphs bigger than this draw an overview when zoomed far out
const OVERVIEW_BELOW = 0.2;

export class GraphCanvas extends Drawing {
  /** onActivate(element): a node or group frame was clicked or pressed (Enter, space);
   *  onBackground(): a click hit nothing. */
  constructor({ onActivate, onBackground }) {
    super();
    this.onActivate = onActivate;
    this.data = null; // the drawn /api/graph/view answer
    this.byId = new Map(); // node id -> its <g>
    this.svg = svgEl('svg', {
      class: 'graph-svg', tabindex: 0, role: 'application', 'data-state': 'empty',
      'aria-label': 'Model graph. Drag or arrow keys to pan, wheel or +/- to zoom, 0 to fit, 1 for actual size.',
    });
    this.element = this.svg;
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
    // the screen's box, read while the old drawing (culled) is in: once the new one is in,
    // reading any box lays out every tile of it, wanted or not (SVG text makes that costly)
    const screen = this.svg.getBoundingClientRect();
    this.data = data;
    ({ byId: this.byId, tiles: this.tiles, layers: this.layers } = drawGraph(this.viewport, data));
    this.overview = null;
    this.overviewShown = false;
    this.#onTransform(this.pz.k, screen);
    this.svg.dataset.nodes = String(data.nodes.length);
  }

  /** After every pan/zoom frame: level of detail by zoom, and only nearby tiles drawn (the
   *  screen's box is `screen`, else read now). Then onTransform, which may read layout. */
  #onTransform(k, screen = null) {
    this.svg.classList.toggle('far', k < 0.45);
    const many = this.tiles && this.data && this.data.nodes.length > OVERVIEW_MIN_NODES;
    if (this.tiles) this.#setOverview(many && k < OVERVIEW_BELOW);
    if (this.tiles && !this.overviewShown) {
      const r = screen || this.svg.getBoundingClientRect();
      const [x0, y0] = this.pz.toGraph(r.left, r.top, r);
      const [x1, y1] = this.pz.toGraph(r.right, r.bottom, r);
      const mx = (x1 - x0) * 0.5;
      const my = (y1 - y0) * 0.5;
      cullTiles(this.tiles, [x0 - mx, y0 - my, x1 + mx, y1 + my]);
    }
    if (this.onTransform) this.onTransform(this); // e.g. a diff's other side follows
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
    this.panZoomKey(e);
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
