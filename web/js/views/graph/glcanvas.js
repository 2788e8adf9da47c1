// The graph drawn with WebGL2, for views too big for SVG (tens of thousands of boxes): one
// pass over /api/graph/view's answer builds typed arrays that are uploaded once (glscene.js);
// a pan or zoom redraws them with new uniforms (glrender.js), or far out as one image
// (glimage.js). Labels are drawn only when legible and only for the boxes near the screen
// (gllabels.js). No DOM per node: hit testing (hover, click) goes through a grid, and
// keyboard users move a cursor between nodes (glkeys.js) that a live region announces. This
// module is the drawing's object: its canvas, events, the calls stage.js makes, and its marks
// (selection, find, diff outlines, node styles: painted by glmarks.js).
import { el, fmtInt } from '../../shared/dom.js';
import { Drawing } from './drawing.js';
import { PanZoom } from './panzoom.js';
import { GLRenderer } from './glrender.js';
import { packColor, packed } from './glcolors.js';
import { GlyphAtlas, GlyphRun } from './glyphs.js';
import { HitGrid } from './hitgrid.js';
import { HEAD_H, headWidth } from './render.js';
import { buildScene } from './glscene.js';
import { updateMarks, repaint } from './glmarks.js';
import { updateLabels } from './gllabels.js';
import { farOut, drawImage } from './glimage.js';
import { nodeLabel, nodeTooltip, readingOrder, keyDown } from './glkeys.js';

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
    on('keydown', (e) => keyDown(this, e));
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
  /** Build and upload everything for one view (see glscene.js). */
  draw(data) {
    this.data = data;
    this.#readTheme();
    const scene = buildScene(data);
    ({
      index: this.index, rects: this.rects, colors: this.rectColors, lines: this.lines, tiles: this.tiles,
      boxRect: this.boxRect, baseFill: this.baseFill, baseStroke: this.baseStroke, baseWidth: this.baseWidth,
      typicalH: this.typicalH,
    } = scene);
    this.renderer.setScene(scene);
    this.grid = new HitGrid(data.nodes);
    this.order = null;
    this.adjacency = null;
    this.hover = -1;
    this.labelsFor = null; // the boxes carry their base colours: the marks come next (setMarks)
    this.element.dataset.nodes = String(data.nodes.length);
    this.schedule();
  }

  /** Draw `data` once, laid out at full size but unseen (see GraphStage.prewarm). */
  async prewarm(data) {
    const style = this.element.style;
    Object.assign(style, { display: '', opacity: '0.01', position: 'absolute', inset: '0', pointerEvents: 'none' });
    try {
      this.draw(data);
      await this.schedule();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    } finally {
      Object.assign(style, { opacity: '', position: '', inset: '', pointerEvents: '' });
    }
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
    updateMarks(this, () => {
      this.selected = selected;
      this.cursor = selected;
      this.outlines = outlines;
      this.styles = styles;
      this.matches = new Set(matches);
      this.current = current;
    });
  }

  setSelected(id) {
    updateMarks(this, () => {
      this.selected = id;
      this.cursor = id;
    });
  }

  setMatches(ids, current) {
    updateMarks(this, () => {
      this.matches = new Set(ids);
      this.current = current;
    });
  }

  /** outlines: Map of drawn id -> css colour (the diff's marks). */
  setOutlines(outlines) {
    updateMarks(this, () => { this.outlines = outlines || new Map(); });
  }

  /** styles: Map or object of node id -> {fill: '#rrggbb', badge: 'text'}; null clears. */
  setNodeStyle(styles) {
    updateMarks(this, () => { this.styles = styles instanceof Map ? styles : new Map(Object.entries(styles || {})); });
  }

  // ---- a frame -------------------------------------------------------------------------------
  /** The graph rectangle on screen: [x0, y0, x1, y1]. */
  visibleRect() {
    const w = this.element.clientWidth;
    const h = this.element.clientHeight;
    const { k, tx, ty } = this.pz;
    return [-tx / k, -ty / k, (w - tx) / k, (h - ty) / k];
  }

  #frame() {
    if (!this.data) return;
    const t0 = performance.now();
    const view = this.visibleRect();
    if (farOut(this, view)) {
      this.mode = 'image';
      drawImage(this, view);
    } else {
      this.mode = 'gpu';
      updateLabels(this);
      this.renderer.draw(this.pz.k, this.pz.tx, this.pz.ty, view, this.colors);
    }
    this.lastDraw = performance.now() - t0;
    if (this.onTransform) this.onTransform(this);
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
    else this.element.title = hit.type === 'head' ? `Collapse group ${hit.path}` : nodeTooltip(this.data.nodes[hit.index]);
  }

  #setHover(i) {
    if (i === this.hover) return;
    const before = this.hover;
    this.hover = i;
    repaint(this, [before, i].filter((j) => j >= 0));
  }

  // ---- keyboard (the keys themselves: glkeys.js) -------------------------------------------
  /** Put the keyboard cursor on node `id`: highlighted, brought into view, announced. */
  moveCursor(id, how = '') {
    const i = this.index.get(id);
    if (i === undefined) return;
    const before = this.cursor;
    this.cursor = id;
    repaint(this, [before, id].filter(Boolean));
    const n = this.data.nodes[i];
    const [x0, y0, x1, y1] = this.visibleRect();
    if (n.x < x0 || n.y < y0 || n.x + n.w > x1 || n.y + n.h > y1) this.pz.centerOn(n.x + n.w / 2, n.y + n.h / 2);
    readingOrder(this);
    this.announce(`${how}${nodeLabel(n)}, node ${fmtInt(this.rank[i] + 1)} of ${fmtInt(this.data.nodes.length)}`);
  }

  destroy() {
    this.pz.destroy();
    this.renderer.destroy();
  }
}
