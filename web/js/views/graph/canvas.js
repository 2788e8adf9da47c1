// The graph's SVG canvas: one /api/graph/view answer drawn inside a pan/zoom viewport, with
// level of detail by zoom (far out, an overview of a big graph; otherwise only the tiles
// near the screen attached), fitting, the keyboard (pan and zoom; Tab and Alt+Down/Up move
// between nodes as in the WebGL drawing, see glkeys.js), and export of the whole drawing.
import { drawGraph, drawOverview, graphDefs, svgEl, cullTiles, headWidth, HEAD_H } from './render.js';
import { PanZoom } from './panzoom.js';
import { Drawing } from './drawing.js';
import { nodeLabel, readingCompare, neighbours } from './glkeys.js';
import { fmtInt } from '../../shared/dom.js';

const OVERVIEW_MIN_NODES = 300; // graphs bigger than this draw an overview when zoomed far out
const OVERVIEW_BELOW = 0.2;

/** The id a focusable element of the drawing stands for: a node's, or a group header's
 *  frame's (`g:<path>`, as the group's box is when collapsed); null for anything else. */
function idOf(element) {
  if (!element || !element.classList) return null;
  if (element.classList.contains('frame-head')) return element.parentNode.dataset.id;
  return element.classList.contains('node') ? element.dataset.id : null;
}

export class GraphCanvas extends Drawing {
  /** onActivate(element): a node or group frame was clicked or pressed (Enter, space);
   *  onBackground(): a click hit nothing; announce(text): say where the keyboard moved (the
   *  stage's live region). */
  constructor({ onActivate, onBackground, announce }) {
    super();
    this.onActivate = onActivate;
    this.announce = announce;
    this.data = null; // the drawn /api/graph/view answer
    this.byId = new Map(); // node id -> its <g>
    this.heads = new Map(); // frame id -> its header's <g>
    this.order = null; // the keyboard's items in reading order (see #readingOrder)
    this.adjacency = null; // (glkeys.neighbours)
    this.pendingFocus = null; // an item to focus once its tile is attached
    this.svg = svgEl('svg', {
      class: 'graph-svg', tabindex: 0, role: 'application', 'data-state': 'empty',
      'aria-label': 'Model graph. Drag or arrow keys to pan, wheel or +/- to zoom, 0 to fit, 1 for actual size; '
        + 'Tab and Shift+Tab move between nodes, Alt+Down and Alt+Up follow an edge, '
        + 'Enter selects, expands or collapses.',
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
    this.svg.addEventListener('focusin', (e) => {
      if (e.target !== this.svg) this.pendingFocus = null; // a node has it (click, reveal)
    });
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

  /** Draw view `data`. The keyboard focus, on a node or group header, stays on it, or on
   *  the same group's header or box (Enter expanded or collapsed it); else on the drawing. */
  draw(data) {
    // the screen's box, read while the old drawing (culled) is in: once the new one is in,
    // reading any box lays out every tile of it, wanted or not (SVG text makes that costly)
    const screen = this.svg.getBoundingClientRect();
    const active = document.activeElement;
    const focused = active && active !== this.svg && this.svg.contains(active) ? idOf(active) : null;
    this.data = data;
    ({ byId: this.byId, heads: this.heads, tiles: this.tiles, layers: this.layers } = drawGraph(this.viewport, data));
    this.order = null;
    this.adjacency = null;
    this.pendingFocus = null;
    this.overview = null;
    this.overviewShown = false;
    this.#onTransform(this.pz.k, screen);
    this.svg.dataset.nodes = String(data.nodes.length);
    if (focused !== null) {
      this.#readingOrder();
      const item = this.itemById.get(focused);
      if (item) this.#moveTo(item, '', false);
      else this.svg.focus({ preventScroll: true });
    }
  }

  /** After every pan/zoom frame: level of detail by zoom, and only nearby tiles drawn (the
   *  screen's box is `screen`, else read now). Then onTransform, which may read layout. */
  #onTransform(k, screen = null) {
    const active = document.activeElement;
    const focused = active !== this.svg && this.viewport.contains(active) ? active : null;
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
    if (focused && !focused.isConnected) { // culled, or under the overview: the drawing
      this.#readingOrder(); // keeps the focus, the keyboard's cursor stays on the item
      this.pendingFocus = this.itemById.get(idOf(focused)) || null;
      this.svg.focus({ preventScroll: true });
    }
    const wanted = this.pendingFocus;
    if (wanted && this.#element(wanted).isConnected) {
      this.pendingFocus = null;
      if (document.activeElement === this.svg) this.#element(wanted).focus({ preventScroll: true });
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

  // ---- keyboard: the WebGL drawing's keys (glkeys.js), with focus on the elements ------------
  #key(e) {
    const target = e.target;
    if ((e.key === 'Enter' || e.key === ' ') && target !== this.svg) {
      e.preventDefault();
      this.onActivate(target); // a redraw keeps the focus on the group (see draw)
      return;
    }
    if (this.data && e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) {
      const order = this.#readingOrder();
      const from = this.#cursor(target);
      const next = (from ? from.rank : -1) + (e.shiftKey ? -1 : 1);
      if (next < 0 || next >= order.length) return; // let the focus leave the drawing
      e.preventDefault();
      this.#moveTo(order[next]);
      return;
    }
    if (this.data && e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      const from = this.#cursor(target);
      if (!from || !from.node) return;
      const forward = e.key === 'ArrowDown';
      const next = this.itemById.get(neighbours(this, from.id, forward)[0]);
      if (next) this.#moveTo(next, forward ? 'Next along an edge: ' : 'Previous along an edge: ');
      return;
    }
    this.panZoomKey(e);
  }

  /** What the keyboard moves between, in reading order (glkeys.readingCompare): the nodes,
   *  and the headers of the expanded groups (a header is above its group's members, so it
   *  comes before them; Enter on it collapses the group). */
  #readingOrder() {
    if (!this.order) {
      const items = [
        ...this.data.frames.map((f) => ({ id: f.id, x: f.x, y: f.y, frame: f })),
        ...this.data.nodes.map((n) => ({ id: n.id, x: n.x, y: n.y, node: n })),
      ].sort(readingCompare(this.data.direction === 'LR'));
      let nodes = 0;
      items.forEach((item, rank) => {
        item.rank = rank;
        if (item.node) item.nodeRank = (nodes += 1);
      });
      this.order = items;
      // a group is a frame or a box, never both: they share the id g:<path>
      this.itemById = new Map(items.map((item) => [item.id, item]));
    }
    return this.order;
  }

  /** Where the keyboard is: the focused item (or the one a move is about to focus); on the
   *  drawing itself, the selected node, as the WebGL cursor starts from the selection. */
  #cursor(target) {
    this.#readingOrder();
    if (target === this.svg && this.pendingFocus) return this.pendingFocus;
    const id = idOf(target);
    if (id !== null) return this.itemById.get(id) || null;
    for (const [nodeId, g] of this.byId) {
      if (g.classList.contains('selected')) return this.itemById.get(nodeId) || null;
    }
    return null;
  }

  #element(item) {
    return item.node ? this.byId.get(item.id) : this.heads.get(item.id);
  }

  /** Focus `item` (brought on screen first if it is not), and announce it. */
  #moveTo(item, how = '', reveal = true) {
    const box = item.node || { x: item.frame.x, y: item.frame.y, w: headWidth(item.frame), h: HEAD_H };
    if (reveal && (this.overviewShown || !this.#onScreen(box))) {
      // (far out, the overview has no elements: in to where the boxes are drawn)
      this.pz.centerOn(box.x + box.w / 2, box.y + box.h / 2, this.overviewShown ? Math.max(this.pz.k, OVERVIEW_BELOW) : this.pz.k);
    }
    const element = this.#element(item);
    if (element.isConnected) {
      this.pendingFocus = null;
      element.focus({ preventScroll: true });
    } else { // its tile is attached with the next frame (#onTransform)
      this.pendingFocus = item;
      this.svg.focus({ preventScroll: true });
    }
    const text = item.node
      ? `${nodeLabel(item.node)}, node ${fmtInt(item.nodeRank)} of ${fmtInt(this.data.nodes.length)}`
      : `Group ${item.frame.label}, ${item.frame.ops} ops, expanded`;
    this.#announce(`${how}${text}`);
  }

  #onScreen(box) {
    const { k, tx, ty } = this.pz;
    return box.x * k + tx >= 0 && box.y * k + ty >= 0
      && (box.x + box.w) * k + tx <= this.svg.clientWidth && (box.y + box.h) * k + ty <= this.svg.clientHeight;
  }

  #announce(text) {
    if (this.announce) this.announce(text);
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

  /** What an export serializes (download.js svgParts' `drawing`): every tile's elements, in
   *  the order they are in the document with every tile attached. */
  exportDrawing() {
    const elements = [];
    this.#withAllTiles(() => {
      this.layers.forEach((layer, i) => {
        for (const group of layer.children) {
          for (const child of group.children) elements.push([i, group.dataset.tile, child, false]);
        }
      });
    });
    return { viewport: this.viewport, layers: this.layers, count: elements.length, elements };
  }

  destroy() {
    this.pz.destroy();
  }
}
