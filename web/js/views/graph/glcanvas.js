// The graph drawn with WebGL2, for views too big for SVG (tens of thousands of boxes): one
// pass over /api/graph/view's answer builds typed arrays that are uploaded once; a pan or
// zoom redraws them with new uniforms. Labels are drawn only when legible and only for the
// boxes near the screen. No DOM per node: hit testing (hover, click) goes through a grid,
// and keyboard users move a cursor between nodes (Tab, or along edges with Alt+arrows) that
// a live region announces.
import { el } from '../../shared/dom.js';
import {
  colorsOf, TEXT_COLOR, EDGE_COLOR, FRAME_STROKE, FRAME_FILL, FRAME_TEXT, LABEL_COLOR,
} from './colors.js';
import { Drawing } from './drawing.js';
import { PanZoom } from './panzoom.js';
import { GLRenderer, RECT_FLOATS, packColor } from './glrender.js';
import { GlyphAtlas, GlyphRun } from './glyphs.js';
import { HitGrid } from './hitgrid.js';
import { PAD_X, PAD_Y, TITLE_H, LINE_H, HEAD_H, headWidth, labelPoint } from './render.js';

// Highlights, as in graph.css for the SVG drawing: [stroke, width (graph px), least px]
const SELECTED = ['#2f6fde', 3, 2.5];
const CURRENT = ['#e8590c', 4, 3];
const MATCH = ['#e8a100', 3, 2.5];
const OUTLINE_WIDTH = 4;
// Label levels by zoom: a 12 px title is legible from about 4 px on screen
const TITLES_FROM = 0.33;
const DETAILS_FROM = 0.5;
const EDGE_LABELS_FROM = 0.65;
const MAX_LABELLED = 3000; // boxes labelled at once (more would not be legible anyway)
// Far out (see #farOut): with boxes under FAR_BOX_PX high, an image is drawn when more than
// FAR_ITEMS boxes and segments are on screen (fewer cost the GPU path less than an upload).
const FAR_BOX_PX = 10;
const FAR_ITEMS = 20000;
const CURVE_STEPS = 3; // straight pieces per rounded corner of an edge

/** A uniform grid of tiles over the drawing: items are grouped by the tile of their centre. */
class Tiling {
  constructor(width, height, count) {
    // about 100 boxes a tile where the graph is dense; at most 200,000 tiles
    this.side = Math.max(256, Math.sqrt((Math.max(width, 1) * Math.max(height, 1)) / Math.max(1, count / 100)));
    for (;;) {
      this.nx = Math.ceil(Math.max(width, 1) / this.side) + 1;
      this.ny = Math.ceil(Math.max(height, 1) / this.side) + 1;
      if (this.nx * this.ny <= 200000) break;
      this.side *= 2;
    }
    this.count = this.nx * this.ny;
    this.boxes = new Float32Array(this.count * 4).fill(NaN); // the union of each tile's items
  }

  /** The corner of tile `key`: its items' coordinates are relative to it (see glrender.js). */
  origin(key) {
    return [(key % this.nx) * this.side, Math.floor(key / this.nx) * this.side];
  }

  key(x, y) {
    const cx = Math.min(this.nx - 1, Math.max(0, Math.floor(x / this.side)));
    const cy = Math.min(this.ny - 1, Math.max(0, Math.floor(y / this.side)));
    return cy * this.nx + cx;
  }

  /** Widen tile `key`'s box to hold the rectangle (x, y, w, h). */
  grow(key, x, y, w, h) {
    const b = this.boxes;
    const o = key * 4;
    if (Number.isNaN(b[o])) {
      b[o] = x;
      b[o + 1] = y;
      b[o + 2] = x + w;
      b[o + 3] = y + h;
      return;
    }
    b[o] = Math.min(b[o], x);
    b[o + 1] = Math.min(b[o + 1], y);
    b[o + 2] = Math.max(b[o + 2], x + w);
    b[o + 3] = Math.max(b[o + 3], y + h);
  }

  box(key) {
    return Array.from(this.boxes.subarray(key * 4, key * 4 + 4));
  }
}

/**
 * The route through `points` ([[x, y]]) as the SVG draws it (render.js's pathData): straight
 * to the middle of the first leg, a quadratic curve round each corner, straight to the end.
 * Returned flat ([x0, y0, x1, y1, ...]), each curve as CURVE_STEPS straight pieces.
 */
function smooth(points) {
  const n = points.length;
  if (n < 3) return points.flat();
  const out = [points[0][0], points[0][1]];
  for (let i = 1; i < n - 1; i += 1) {
    const [ax, ay] = [(points[i - 1][0] + points[i][0]) / 2, (points[i - 1][1] + points[i][1]) / 2];
    const [cx, cy] = points[i];
    const [bx, by] = [(points[i][0] + points[i + 1][0]) / 2, (points[i][1] + points[i + 1][1]) / 2];
    out.push(ax, ay);
    for (let k = 1; k <= CURVE_STEPS; k += 1) {
      const t = k / CURVE_STEPS;
      const u = 1 - t;
      out.push(u * u * ax + 2 * u * t * cx + t * t * bx, u * u * ay + 2 * u * t * cy + t * t * by);
    }
  }
  out.push(points[n - 1][0], points[n - 1][1]);
  return out;
}

/** Items sorted by key (0 <= key < count): {order, starts} with starts[key] the first. */
function countingSort(keys, count) {
  const starts = new Int32Array(count + 1);
  for (let i = 0; i < keys.length; i += 1) starts[keys[i] + 1] += 1;
  for (let k = 0; k < count; k += 1) starts[k + 1] += starts[k];
  const next = starts.slice(0, count);
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i += 1) {
    order[next[keys[i]]] = i;
    next[keys[i]] += 1;
  }
  return { order, starts };
}

const packed = {
  text: packColor(TEXT_COLOR), sub: packColor(TEXT_COLOR, 0.8), frameText: packColor(FRAME_TEXT),
  label: packColor(LABEL_COLOR), edge: packColor(EDGE_COLOR), frameFill: packColor(FRAME_FILL),
  frameStroke: packColor(FRAME_STROKE),
};

/** A darker shade of a packed colour (the hovered box). */
function shade(c, f) {
  const r = Math.round((c & 255) * f);
  const g = Math.round(((c >>> 8) & 255) * f);
  const b = Math.round(((c >>> 16) & 255) * f);
  return ((c & 0xff000000) | (b << 16) | (g << 8) | r) >>> 0;
}

function nodeLabel(item) {
  return item.type === 'group'
    ? `Group ${item.title}, ${item.ops} ops, collapsed`
    : `${item.title}${item.subtitle ? ` ${item.subtitle}` : ''}`;
}

export class GLCanvas extends Drawing {
  /**
   * onActivate(hit): a node ({type: 'node', id}) or a group frame's head ({type: 'head',
   * path}) was clicked or pressed (Enter, space); onBackground(): a click hit nothing;
   * announce(text): say what the keyboard cursor is on. Throws when there is no WebGL2.
   */
  constructor({ onActivate, onBackground, announce }) {
    super();
    this.onActivate = onActivate;
    this.onBackground = onBackground;
    this.announce = announce;
    this.element = el('canvas', {
      class: 'graph-gl', tabindex: 0, role: 'application',
      'aria-label': 'Model graph (WebGL). Drag or arrow keys to pan, wheel or +/- to zoom, 0 to fit, '
        + '1 for actual size; Tab and Shift+Tab move between nodes, Alt+Down and Alt+Up follow an edge, '
        + 'Enter selects or expands.',
    });
    this.renderer = new GLRenderer(this.element);
    this.atlas = new GlyphAtlas();
    this.run = new GlyphRun();
    this.data = null;
    this.onTransform = null;
    this.colors = { background: packColor('#ffffff'), edge: packed.edge };
    this.selected = null;
    this.cursor = null;
    this.hover = -1;
    this.matches = new Set();
    this.current = null;
    this.outlines = new Map(); // id -> css colour
    this.styles = new Map(); // id -> {fill, badge}
    this.pz = new PanZoom(this.element, null, { onZoom: () => this.#frame() });
    const on = (type, fn) => this.element.addEventListener(type, fn);
    on('click', (e) => this.#click(e));
    on('pointermove', (e) => this.#hover(e));
    on('pointerleave', () => this.#setHover(-1));
    on('keydown', (e) => this.#key(e));
    on('webglcontextlost', (e) => e.preventDefault());
  }

  /** The page's background behind the drawing (the first opaque one up), for the theme. */
  #readTheme() {
    this.colors.background = packColor('#ffffff');
    for (let node = this.element.parentElement; node; node = node.parentElement) {
      const m = /rgba?\(([^)]+)\)/.exec(getComputedStyle(node).backgroundColor || '');
      const parts = m ? m[1].split(',').map(Number) : null;
      if (parts && (parts.length < 4 || parts[3] > 0)) {
        this.colors.background = packColor(`rgb(${parts.slice(0, 3).join(',')})`);
        return;
      }
    }
  }

  // ---- the scene -----------------------------------------------------------------------------
  /**
   * Build and upload everything for one view, in one pass per kind: boxes, segments and
   * arrowheads are sorted by tile (counting sort) so that each tile's items are one range
   * of each buffer, and a frame sends only the ranges of the tiles it sees.
   */
  draw(data) {
    this.data = data;
    this.#readTheme();
    const nodes = data.nodes;
    const frames = data.frames;
    this.index = new Map();
    let groups = 0;
    nodes.forEach((n, i) => {
      this.index.set(n.id, i);
      if (n.type === 'group') groups += 1;
    });
    const tiling = new Tiling(data.width, data.height, nodes.length);
    const frameSort = countingSort(frames.map((f) => tiling.key(f.x + f.w / 2, f.y + f.h / 2)), tiling.count);
    const nodeSort = countingSort(nodes.map((n) => tiling.key(n.x + n.w / 2, n.y + n.h / 2)), tiling.count);
    const total = frames.length + groups + nodes.length;
    const rects = new Float32Array(total * RECT_FLOATS);
    const colors = new Uint32Array(total * 2);
    const put = (r, x, y, w, h, radius, stroke, fill, strokeColor) => {
      const o = r * RECT_FLOATS;
      rects[o] = x;
      rects[o + 1] = y;
      rects[o + 2] = w;
      rects[o + 3] = h;
      rects[o + 4] = radius;
      rects[o + 5] = stroke;
      colors[r * 2] = fill;
      colors[r * 2 + 1] = strokeColor;
    };
    let r = 0;
    const frameAt = new Int32Array(tiling.count + 1); // first box slot of each tile's frames
    for (let key = 0, j = 0; key < tiling.count; key += 1) {
      frameAt[key] = r;
      const [ox, oy] = tiling.origin(key);
      for (; j < frameSort.starts[key + 1]; j += 1) {
        const f = frames[frameSort.order[j]];
        put(r, f.x - ox, f.y - oy, f.w, f.h, 8, 1, packed.frameFill, packed.frameStroke);
        rects[r * RECT_FLOATS + 7] = 1; // dashed, as the SVG frames
        tiling.grow(key, f.x, f.y, f.w, f.h);
        r += 1;
      }
    }
    frameAt[tiling.count] = r;
    const byCategory = new Map();
    this.boxRect = new Int32Array(nodes.length);
    this.baseFill = new Uint32Array(nodes.length);
    this.baseStroke = new Uint32Array(nodes.length);
    this.baseWidth = new Float32Array(nodes.length);
    this.slotNode = new Int32Array(total).fill(-1); // box slot -> node (-1: a frame or a shadow)
    const nodeAt = new Int32Array(tiling.count + 1);
    let hsum = 0;
    for (let key = 0, j = 0; key < tiling.count; key += 1) {
      nodeAt[key] = r;
      const [ox, oy] = tiling.origin(key);
      for (; j < nodeSort.starts[key + 1]; j += 1) {
        const i = nodeSort.order[j];
        const n = nodes[i];
        hsum += n.h;
        if (!byCategory.has(n.category)) byCategory.set(n.category, colorsOf(n.category).map((c) => packColor(c)));
        const [fill, stroke] = byCategory.get(n.category);
        const radius = n.type === 'input' || n.type === 'output' ? n.h / 2 : 5;
        const group = n.type === 'group';
        if (group) {
          put(r, n.x + 3 - ox, n.y + 3 - oy, n.w, n.h, radius, 1, fill, stroke); // the stack behind
          r += 1;
        }
        this.boxRect[i] = r;
        this.slotNode[r] = i;
        this.baseFill[i] = fill;
        this.baseStroke[i] = stroke;
        this.baseWidth[i] = group ? 1.5 : 1;
        put(r, n.x - ox, n.y - oy, n.w, n.h, radius, this.baseWidth[i], fill, stroke);
        tiling.grow(key, n.x, n.y, n.w + (group ? 3 : 0), n.h + (group ? 3 : 0));
        r += 1;
      }
    }
    nodeAt[tiling.count] = r;
    this.typicalH = nodes.length ? hsum / nodes.length : 40;
    this.rects = rects;
    this.rectColors = colors;
    const { lines, lineAt, arrows, arrowAt } = this.#edges(data.edges, tiling);
    this.lines = lines;
    this.tiles = [];
    for (let key = 0; key < tiling.count; key += 1) {
      const t = {
        box: tiling.box(key), origin: tiling.origin(key), frames: [frameAt[key], frameAt[key + 1]], rects: [nodeAt[key], nodeAt[key + 1]],
        lines: [lineAt[key], lineAt[key + 1]], arrows: [arrowAt[key], arrowAt[key + 1]],
      };
      if (t.frames[1] > t.frames[0] || t.rects[1] > t.rects[0] || t.lines[1] > t.lines[0]) this.tiles.push(t);
    }
    this.renderer.setScene({ rects, colors, lines, arrows, tiles: this.tiles });
    this.grid = new HitGrid(nodes);
    this.order = null;
    this.adjacency = null;
    this.hover = -1;
    this.labelsFor = null; // the boxes carry their base colours: the marks come next (setMarks)
    this.element.dataset.nodes = String(nodes.length);
    this.schedule();
  }

  /** Edges as line segments and arrowheads (a triangle at each route's end), by tile. */
  #edges(edges, tiling) {
    const routes = edges.filter((e) => e.points.length > 1).map((e) => smooth(e.points));
    let segments = 0;
    for (const p of routes) segments += p.length / 2 - 1;
    const heads = routes.length;
    const segKeys = new Int32Array(segments);
    const headKeys = new Int32Array(heads);
    let s = 0;
    routes.forEach((p, h) => {
      for (let i = 0; i + 3 < p.length; i += 2) {
        segKeys[s] = tiling.key((p[i] + p[i + 2]) / 2, (p[i + 1] + p[i + 3]) / 2);
        s += 1;
      }
      headKeys[h] = tiling.key(p[p.length - 2], p[p.length - 1]);
    });
    const segPos = countingSort(segKeys, tiling.count).starts;
    const headPos = countingSort(headKeys, tiling.count).starts;
    const lineAt = segPos.slice();
    const arrowAt = headPos.slice();
    const lines = new Float32Array(segments * 4);
    const arrows = new Float32Array(heads * 6);
    s = 0;
    routes.forEach((p, h) => {
      for (let i = 0; i + 3 < p.length; i += 2) {
        const key = segKeys[s];
        const o = segPos[key] * 4;
        const [ox, oy] = tiling.origin(key);
        segPos[key] += 1;
        lines[o] = p[i] - ox;
        lines[o + 1] = p[i + 1] - oy;
        lines[o + 2] = p[i + 2] - ox;
        lines[o + 3] = p[i + 3] - oy;
        tiling.grow(key, Math.min(p[i], p[i + 2]), Math.min(p[i + 1], p[i + 3]),
          Math.abs(p[i + 2] - p[i]), Math.abs(p[i + 3] - p[i + 1]));
        s += 1;
      }
      const n = p.length;
      const [tx, ty, sx, sy] = [p[n - 2], p[n - 1], p[n - 4], p[n - 3]];
      const len = Math.hypot(tx - sx, ty - sy) || 1;
      const dx = (tx - sx) / len;
      const dy = (ty - sy) / len;
      const bx = tx - dx * 8;
      const by = ty - dy * 8;
      const key = headKeys[h];
      const [ox, oy] = tiling.origin(key);
      arrows.set([tx - ox, ty - oy, bx - dy * 3.5 - ox, by + dx * 3.5 - oy, bx + dy * 3.5 - ox, by - dx * 3.5 - oy],
        headPos[key] * 6);
      headPos[key] += 1;
      tiling.grow(key, tx - 9, ty - 9, 18, 18);
    });
    return { lines, lineAt, arrows, arrowAt };
  }

  /** Write node i's colours and stroke from its base, style and highlights. */
  #paint(i) {
    const n = this.data.nodes[i];
    const r = this.boxRect[i];
    const style = this.styles.get(n.id);
    let fill = style && style.fill ? packColor(style.fill) : this.baseFill[i];
    if (i === this.hover) fill = shade(fill, 0.93);
    let mark = null;
    if (n.id === this.current) mark = CURRENT; // as in graph.css: the find's current wins
    else if (n.id === this.selected || n.id === this.cursor) mark = SELECTED;
    else if (this.matches.has(n.id)) mark = MATCH;
    else if (this.outlines.has(n.id)) mark = [this.outlines.get(n.id), OUTLINE_WIDTH, 3];
    const o = r * RECT_FLOATS;
    this.rects[o + 5] = mark ? mark[1] : this.baseWidth[i];
    this.rects[o + 6] = mark ? mark[2] : 0;
    this.rectColors[r * 2] = fill;
    this.rectColors[r * 2 + 1] = mark ? packColor(mark[0]) : this.baseStroke[i];
    return r;
  }

  /** The ids whose boxes differ from their base look now. */
  #marked() {
    const ids = new Set([this.selected, this.cursor, this.current, ...this.matches, ...this.outlines.keys(), ...this.styles.keys()]);
    ids.delete(null);
    ids.delete(undefined);
    return ids;
  }

  /** Apply `change` (of the marks) and repaint the boxes it touched: one by one when few,
   *  all at once (one upload) when many, e.g. a colouring of every node. */
  #update(change) {
    const before = this.#marked();
    change();
    if (!this.data) return;
    const ids = this.#marked();
    for (const id of before) ids.add(id);
    if (ids.size > 2000) {
      for (let i = 0; i < this.data.nodes.length; i += 1) this.#paint(i);
      this.renderer.updateRects(this.rects, this.rectColors);
    } else {
      this.#repaint(ids);
    }
    this.labelsFor = null; // badges may have changed
    this.schedule();
  }

  #repaint(ids) {
    if (!this.data) return;
    for (const id of ids) {
      const i = typeof id === 'number' ? id : this.index.get(id);
      if (i === undefined || i < 0) continue;
      const r = this.#paint(i);
      this.renderer.updateRects(this.rects, this.rectColors, r, r + 1);
    }
    this.schedule();
  }

  /** Redraw at the next animation frame. */
  schedule() {
    return this.pz.apply();
  }

  // ---- highlights and styles (the same calls as the SVG drawing, through stage.js) ------------
  has(id) {
    return Boolean(this.index && this.index.has(id));
  }

  /** Every mark at once (after a redraw): one repaint. */
  setMarks({ selected, outlines, styles, matches, current }) {
    this.#update(() => {
      this.selected = selected;
      this.cursor = selected;
      this.outlines = outlines;
      this.styles = styles;
      this.matches = new Set(matches);
      this.current = current;
    });
  }

  setSelected(id) {
    this.#update(() => {
      this.selected = id;
      this.cursor = id;
    });
  }

  setMatches(ids, current) {
    this.#update(() => {
      this.matches = new Set(ids);
      this.current = current;
    });
  }

  /** outlines: Map of drawn id -> css colour (the diff's marks). */
  setOutlines(outlines) {
    this.#update(() => { this.outlines = outlines || new Map(); });
  }

  /** styles: Map or object of node id -> {fill: '#rrggbb', badge: 'text'}; null clears. */
  setNodeStyle(styles) {
    this.#update(() => { this.styles = styles instanceof Map ? styles : new Map(Object.entries(styles || {})); });
  }

  // ---- a frame -------------------------------------------------------------------------------
  /** The graph rectangle on screen. */
  #visible() {
    const w = this.element.clientWidth;
    const h = this.element.clientHeight;
    const { k, tx, ty } = this.pz;
    return [-tx / k, -ty / k, (w - tx) / k, (h - ty) / k];
  }

  #frame() {
    if (!this.data) return;
    const t0 = performance.now();
    const view = this.#visible();
    if (this.#farOut(view)) {
      this.mode = 'image';
      this.#drawImage(view);
    } else {
      this.mode = 'gpu';
      this.#labels();
      this.renderer.draw(this.pz.k, this.pz.tx, this.pz.ty, view, this.colors);
    }
    this.lastDraw = performance.now() - t0;
    if (this.onTransform) this.onTransform(this);
  }

  /**
   * Far out, boxes are dots and there may be a hundred thousand of them on screen: sending
   * them as triangles costs software WebGL a microsecond each. Then the frame is an image
   * drawn here (a pixel or a few per box, edges stepped pixel by pixel), one texture upload.
   */
  #farOut(view) {
    if (this.pz.k * this.typicalH >= FAR_BOX_PX) return false;
    let items = 0;
    for (const t of this.tiles) {
      const b = t.box;
      if (b[0] > view[2] || b[2] < view[0] || b[1] > view[3] || b[3] < view[1]) continue;
      items += (t.rects[1] - t.rects[0]) + (t.lines[1] - t.lines[0]) + (t.frames[1] - t.frames[0]);
    }
    return items > FAR_ITEMS;
  }

  #drawImage(view) {
    this.renderer.resize();
    const w = this.element.width;
    const h = this.element.height;
    if (!this.pixels || this.pixels.length !== w * h) this.pixels = new Uint32Array(w * h);
    const px = this.pixels;
    px.fill(this.colors.background | 0xff000000);
    const dpr = w / Math.max(1, this.element.clientWidth);
    const k = this.pz.k * dpr;
    const ox = this.pz.tx * dpr;
    const oy = this.pz.ty * dpr;
    const visible = this.tiles.filter((t) => {
      const b = t.box;
      return !(b[0] > view[2] || b[2] < view[0] || b[1] > view[3] || b[3] < view[1]);
    });
    const edge = this.colors.edge | 0xff000000;
    const L = this.lines;
    for (const t of visible) {
      const gx = t.origin[0] * k + ox; // the tile's corner on screen
      const gy = t.origin[1] * k + oy;
      for (let sgm = t.lines[0]; sgm < t.lines[1]; sgm += 1) {
        let x = L[sgm * 4] * k + gx;
        let y = L[sgm * 4 + 1] * k + gy;
        const x1 = L[sgm * 4 + 2] * k + gx;
        const y1 = L[sgm * 4 + 3] * k + gy;
        const steps = Math.min(8192, Math.ceil(Math.max(Math.abs(x1 - x), Math.abs(y1 - y))));
        const dx = steps ? (x1 - x) / steps : 0;
        const dy = steps ? (y1 - y) / steps : 0;
        for (let i = 0; i <= steps; i += 1, x += dx, y += dy) {
          const ix = x | 0;
          const iy = y | 0;
          if (ix >= 0 && iy >= 0 && ix < w && iy < h) px[iy * w + ix] = edge;
        }
      }
    }
    const R = this.rects;
    const C = this.rectColors;
    const box = (x0, y0, x1, y1, color) => {
      const ax = Math.max(0, x0);
      const bx = Math.min(w, x1);
      for (let y = Math.max(0, y0); y < Math.min(h, y1); y += 1) px.fill(color, y * w + ax, y * w + Math.max(ax, bx));
    };
    const marks = [];
    for (const t of visible) {
      const gx = t.origin[0] * k + ox;
      const gy = t.origin[1] * k + oy;
      for (let r = t.rects[0]; r < t.rects[1]; r += 1) {
        const o = r * RECT_FLOATS;
        const x0 = Math.floor(R[o] * k + gx);
        const y0 = Math.floor(R[o + 1] * k + gy);
        const x1 = Math.max(x0 + 1, Math.ceil((R[o] + R[o + 2]) * k + gx));
        const y1 = Math.max(y0 + 1, Math.ceil((R[o + 1] + R[o + 3]) * k + gy));
        const stroke = C[r * 2 + 1] | 0xff000000;
        if (R[o + 6] > 0) { // highlighted: a mark big enough to see, drawn over the rest
          const cx = (x0 + x1) >> 1;
          const cy = (y0 + y1) >> 1;
          marks.push([Math.min(x0, cx - 4), Math.min(y0, cy - 4), Math.max(x1, cx + 5), Math.max(y1, cy + 5), stroke]);
        } else if (x1 - x0 <= 2 || y1 - y0 <= 2) {
          box(x0, y0, x1, y1, stroke);
        } else {
          box(x0, y0, x1, y1, stroke);
          box(x0 + 1, y0 + 1, x1 - 1, y1 - 1, C[r * 2] | 0xff000000);
        }
      }
    }
    for (const m of marks) box(...m);
    this.renderer.drawImage(new Uint8Array(px.buffer), w, h);
  }

  /** Rebuild the label glyphs when the view left the labelled area or the level changed. */
  #labels() {
    const k = this.pz.k;
    const level = k < TITLES_FROM ? 0 : k < DETAILS_FROM ? 1 : k < EDGE_LABELS_FROM ? 2 : 3;
    const [x0, y0, x1, y1] = this.#visible();
    const have = this.labelsFor;
    if (have && have.level === level && (level === 0 || (x0 >= have.rect[0] && y0 >= have.rect[1]
        && x1 <= have.rect[2] && y1 <= have.rect[3]))) return;
    // a margin, so that panning rebuilds the glyphs now and then, not every frame; a small
    // one, since every glyph is two triangles that software WebGL pays for in each frame
    const mx = (x1 - x0) * 0.25;
    const my = (y1 - y0) * 0.25;
    const rect = [x0 - mx, y0 - my, x1 + mx, y1 + my];
    this.labelsFor = { level, rect };
    const run = this.run;
    // relative to the labelled area's corner, for float32 precision (see glrender.js)
    const origin = [Math.floor(rect[0]), Math.floor(rect[1])];
    run.clear(origin);
    if (level > 0) this.#layoutLabels(run, rect, level);
    this.renderer.setGlyphs(run, this.atlas, origin);
  }

  #layoutLabels(run, rect, level) {
    const atlas = this.atlas;
    const [x0, y0, x1, y1] = rect;
    for (const f of this.data.frames) {
      if (f.x > x1 || f.x + f.w < x0 || f.y > y1 || f.y + f.h < y0) continue;
      atlas.layout(run, `− ${f.label}`, f.x + 8, f.y + 14, 11, { bold: true, maxWidth: f.w - 12, color: packed.frameText });
    }
    if (level >= 3) {
      const seen = new Set();
      const horizontal = this.data.direction === 'LR';
      for (const e of this.data.edges) {
        if (!e.label || !e.points.length) continue;
        const [x, y] = e.points[0];
        if (x < x0 || x > x1 || y < y0 || y > y1) continue;
        const key = `${e.from}\u0000${e.tensor}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const [lx, ly] = labelPoint(e.points, horizontal);
        atlas.layout(run, e.label, lx, ly, 9, { color: packed.label });
      }
    }
    const nodes = this.data.nodes;
    for (const i of this.grid.within(x0, y0, x1, y1, MAX_LABELLED)) {
      const n = nodes[i];
      const cx = n.x + n.w / 2;
      atlas.layout(run, n.title, cx, n.y + PAD_Y + 13, 12, { bold: true, anchor: 'middle', maxWidth: n.w - 4, color: packed.text });
      const style = this.styles.get(n.id);
      if (style && style.badge) {
        atlas.layout(run, String(style.badge), n.x + n.w - 2 - String(style.badge).length * 5.4, n.y - 3, 9, { bold: true, color: packed.text });
      }
      if (level < 2) continue;
      let y = n.y + PAD_Y + TITLE_H;
      if (n.subtitle) {
        y += LINE_H;
        atlas.layout(run, n.subtitle, cx, y - 3, 10, { anchor: 'middle', maxWidth: n.w - 4, color: packed.sub });
      }
      for (const [key, value] of n.lines) {
        y += LINE_H;
        const keyW = [...key].length * (atlas.advance * 10) / 32;
        atlas.layout(run, key, n.x + PAD_X, y - 3, 10, { bold: true, maxWidth: n.w - 10, color: packed.text });
        atlas.layout(run, ` = ${value}`, n.x + PAD_X + keyW, y - 3, 10, { maxWidth: n.w - 10 - keyW, color: packed.text });
      }
    }
  }

  // ---- pointer -------------------------------------------------------------------------------
  /** What is under client point (x, y): {type: 'node', id} | {type: 'head', path} | null. */
  hitAt(clientX, clientY) {
    if (!this.data) return null;
    const [x, y] = this.pz.toGraph(clientX, clientY);
    const i = this.grid.at(x, y);
    if (i >= 0) return { type: 'node', id: this.data.nodes[i].id, index: i };
    const frames = this.data.frames;
    for (let j = frames.length - 1; j >= 0; j -= 1) { // deepest last: it wins
      const f = frames[j];
      if (x >= f.x && y >= f.y && y <= f.y + HEAD_H && x <= f.x + headWidth(f)) {
        return { type: 'head', path: f.path };
      }
    }
    return null;
  }

  #click(e) {
    const hit = this.hitAt(e.clientX, e.clientY);
    if (hit) this.onActivate(hit);
    else this.onBackground();
  }

  #hover(e) {
    if (e.buttons) return; // dragging
    const hit = this.hitAt(e.clientX, e.clientY);
    this.#setHover(hit && hit.type === 'node' ? hit.index : -1);
    this.element.style.cursor = hit ? 'pointer' : '';
    if (!hit) this.element.removeAttribute('title');
    else this.element.title = hit.type === 'head' ? `Collapse group ${hit.path}` : nodeLabel(this.data.nodes[hit.index]);
  }

  #setHover(i) {
    if (i === this.hover) return;
    const before = this.hover;
    this.hover = i;
    this.#repaint([before, i].filter((j) => j >= 0));
  }

  // ---- keyboard ------------------------------------------------------------------------------
  /** Node indices in reading order (rows, then columns; columns first for LR). */
  #readingOrder() {
    if (!this.order) {
      const nodes = this.data.nodes;
      const lr = this.data.direction === 'LR';
      this.order = Array.from(nodes.keys()).sort((a, b) => {
        const p = nodes[a];
        const q = nodes[b];
        return lr ? p.x - q.x || p.y - q.y : p.y - q.y || p.x - q.x;
      });
      this.rank = new Int32Array(nodes.length);
      this.order.forEach((i, r) => { this.rank[i] = r; });
    }
    return this.order;
  }

  #neighbours(id, forward) {
    if (!this.adjacency) {
      const out = new Map();
      const inn = new Map();
      for (const e of this.data.edges) {
        if (!out.has(e.from)) out.set(e.from, []);
        if (!inn.has(e.to)) inn.set(e.to, []);
        out.get(e.from).push(e.to);
        inn.get(e.to).push(e.from);
      }
      this.adjacency = { out, inn };
    }
    return (forward ? this.adjacency.out : this.adjacency.inn).get(id) || [];
  }

  /** Put the keyboard cursor on node `id`: highlighted, brought into view, announced. */
  moveCursor(id, how = '') {
    const i = this.index.get(id);
    if (i === undefined) return;
    const before = this.cursor;
    this.cursor = id;
    this.#repaint([before, id].filter(Boolean));
    const n = this.data.nodes[i];
    const [x0, y0, x1, y1] = this.#visible();
    if (n.x < x0 || n.y < y0 || n.x + n.w > x1 || n.y + n.h > y1) this.pz.centerOn(n.x + n.w / 2, n.y + n.h / 2);
    this.#readingOrder();
    this.announce(`${how}${nodeLabel(n)}, node ${this.rank[i] + 1} of ${this.data.nodes.length}`);
  }

  #key(e) {
    if (!this.data) return;
    if ((e.key === 'Enter' || e.key === ' ') && this.cursor) {
      e.preventDefault();
      this.onActivate({ type: 'node', id: this.cursor });
      return;
    }
    if (e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) {
      const order = this.#readingOrder();
      const at = this.cursor && this.index.has(this.cursor) ? this.rank[this.index.get(this.cursor)] : -1;
      const next = at + (e.shiftKey ? -1 : 1);
      if (next < 0 || next >= order.length) return; // let the focus leave the drawing
      e.preventDefault();
      this.moveCursor(this.data.nodes[order[next]].id);
      return;
    }
    if (e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp') && this.cursor) {
      e.preventDefault();
      const forward = e.key === 'ArrowDown';
      const next = this.#neighbours(this.cursor, forward)[0];
      if (next) this.moveCursor(next, forward ? 'Next along an edge: ' : 'Previous along an edge: ');
      return;
    }
    this.panZoomKey(e);
  }

  destroy() {
    this.pz.destroy();
    this.renderer.destroy();
  }
}
