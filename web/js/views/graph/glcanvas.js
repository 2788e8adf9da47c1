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

// Highlights, as in graph.css for the SVG drawing: [stroke, width (graph px), least px]
const SELECTED = ['#2f6fde', 3, 2.5];
const CURRENT = ['#e8590c', 4, 3];
const MATCH = ['#e8a100', 3, 2.5];
const OUTLINE_WIDTH = 4;
// Label levels by zoom: a 12 px title is legible from about 4 px on screen
const TITLES_FROM = 0.33;
const DETAILS_FROM = 0.5;
const EDGE_LABELS_FROM = 0.65;
const MAX_LABELLED = 6000; // boxes labelled at once (more would not be legible anyway)
const PAD_Y = 5;
const TITLE_H = 18;
const LINE_H = 13;
const HEAD_H = 20;

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

  /** The page's background, so the drawing matches the theme. */
  #readTheme() {
    const bg = getComputedStyle(this.element.parentNode || document.body).backgroundColor;
    const m = /rgba?\(([^)]+)\)/.exec(bg || '');
    const parts = m ? m[1].split(',').map(Number) : [255, 255, 255, 1];
    const opaque = parts.length < 4 || parts[3] > 0;
    this.colors.background = opaque ? packColor(`rgb(${parts.slice(0, 3).join(',')})`) : packColor('#ffffff');
  }

  // ---- the scene -----------------------------------------------------------------------------
  /** Build and upload everything for one view; typed arrays filled in one pass each. */
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
    for (const f of frames) {
      put(r, f.x, f.y, f.w, f.h, 8, 1, packed.frameFill, packed.frameStroke);
      r += 1;
    }
    const byCategory = new Map();
    this.boxRect = new Int32Array(nodes.length);
    this.baseFill = new Uint32Array(nodes.length);
    this.baseStroke = new Uint32Array(nodes.length);
    this.baseWidth = new Float32Array(nodes.length);
    for (let i = 0; i < nodes.length; i += 1) {
      const n = nodes[i];
      if (!byCategory.has(n.category)) byCategory.set(n.category, colorsOf(n.category).map((c) => packColor(c)));
      const [fill, stroke] = byCategory.get(n.category);
      const radius = n.type === 'input' || n.type === 'output' ? n.h / 2 : 5;
      const group = n.type === 'group';
      if (group) {
        put(r, n.x + 3, n.y + 3, n.w, n.h, radius, 1, fill, stroke); // the stack behind
        r += 1;
      }
      this.boxRect[i] = r;
      this.baseFill[i] = fill;
      this.baseStroke[i] = stroke;
      this.baseWidth[i] = group ? 1.5 : 1;
      put(r, n.x, n.y, n.w, n.h, radius, this.baseWidth[i], fill, stroke);
      r += 1;
    }
    this.rects = rects;
    this.rectColors = colors;
    const { lines, arrows } = this.#edges(data.edges);
    this.renderer.setScene({ rects, colors, frames: frames.length, lines, arrows });
    this.grid = new HitGrid(nodes);
    this.order = null;
    this.adjacency = null;
    this.hover = -1;
    this.labelsFor = null;
    this.#repaintAll();
    this.element.dataset.nodes = String(nodes.length);
    this.schedule();
  }

  /** Edges as line segments and arrowheads (triangles at each route's end). */
  #edges(edges) {
    let segments = 0;
    let heads = 0;
    for (const e of edges) {
      if (e.points.length > 1) {
        segments += e.points.length - 1;
        heads += 1;
      }
    }
    const lines = new Float32Array(segments * 4);
    const arrows = new Float32Array(heads * 6);
    let l = 0;
    let a = 0;
    for (const e of edges) {
      const p = e.points;
      if (p.length < 2) continue;
      for (let i = 0; i + 1 < p.length; i += 1) {
        lines[l] = p[i][0];
        lines[l + 1] = p[i][1];
        lines[l + 2] = p[i + 1][0];
        lines[l + 3] = p[i + 1][1];
        l += 4;
      }
      const [tx, ty] = p[p.length - 1];
      const [sx, sy] = p[p.length - 2];
      const len = Math.hypot(tx - sx, ty - sy) || 1;
      const dx = (tx - sx) / len;
      const dy = (ty - sy) / len;
      const bx = tx - dx * 8;
      const by = ty - dy * 8;
      arrows.set([tx, ty, bx - dy * 3.5, by + dx * 3.5, bx + dy * 3.5, by - dx * 3.5], a);
      a += 6;
    }
    return { lines, arrows };
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

  #repaintAll() {
    if (!this.data) return;
    for (let i = 0; i < this.data.nodes.length; i += 1) this.#paint(i);
    this.renderer.updateRects(this.rects, this.rectColors);
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
    this.selected = selected;
    this.cursor = selected;
    this.outlines = outlines;
    this.styles = styles;
    this.matches = new Set(matches);
    this.current = current;
    this.#repaintAll();
  }

  setSelected(id) {
    const before = [this.selected, this.cursor];
    this.selected = id;
    this.cursor = id;
    this.#repaint([...before, id].filter(Boolean));
  }

  setMatches(ids, current) {
    this.matches = new Set(ids);
    this.current = current;
    this.#repaintAll();
  }

  /** outlines: Map of drawn id -> css colour (the diff's marks). */
  setOutlines(outlines) {
    this.outlines = outlines || new Map();
    this.#repaintAll();
  }

  /** styles: Map or object of node id -> {fill: '#rrggbb', badge: 'text'}; null clears. */
  setNodeStyle(styles) {
    this.styles = styles instanceof Map ? styles : new Map(Object.entries(styles || {}));
    this.#repaintAll();
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
    this.#labels();
    this.renderer.draw(this.pz.k, this.pz.tx, this.pz.ty, this.colors);
    this.lastDraw = performance.now() - t0;
    if (this.onTransform) this.onTransform(this);
  }

  /** Rebuild the label glyphs when the view left the labelled area or the level changed. */
  #labels() {
    const k = this.pz.k;
    const level = k < TITLES_FROM ? 0 : k < DETAILS_FROM ? 1 : k < EDGE_LABELS_FROM ? 2 : 3;
    const [x0, y0, x1, y1] = this.#visible();
    const have = this.labelsFor;
    if (have && have.level === level && (level === 0 || (x0 >= have.rect[0] && y0 >= have.rect[1]
        && x1 <= have.rect[2] && y1 <= have.rect[3]))) return;
    const mx = (x1 - x0) * 0.5;
    const my = (y1 - y0) * 0.5;
    const rect = [x0 - mx, y0 - my, x1 + mx, y1 + my];
    this.labelsFor = { level, rect };
    const run = this.run;
    run.clear();
    if (level > 0) this.#layoutLabels(run, rect, level);
    this.renderer.setGlyphs(run, this.atlas);
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
        atlas.layout(run, e.label, x + 4, horizontal ? y - 4 : y + 12, 9, { color: packed.label });
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
        atlas.layout(run, key, n.x + 8, y - 3, 10, { bold: true, maxWidth: n.w - 16, color: packed.text });
        atlas.layout(run, ` = ${value}`, n.x + 8 + keyW, y - 3, 10, { maxWidth: n.w - 16 - keyW, color: packed.text });
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
      if (x >= f.x && y >= f.y && y <= f.y + HEAD_H && x <= f.x + Math.min(f.w, 30 + f.label.length * 7.2)) {
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
