// What both drawings of a graph (the SVG one, canvas.js, and the WebGL one, glcanvas.js) do
// the same way with their pan/zoom and the drawn view: where an item is and keeping it in
// place across a redraw, the first view, fit, 100%, centring a node, the pan/zoom keys, and
// one zoom step's frame for tests and benchmarks. A subclass sets `element` (the focusable
// drawing, whose box is the screen), `pz` (its PanZoom) and `data` (the drawn view).
export const PAN_STEP = 60; // px an arrow key pans

export class Drawing {
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
    const r = this.element.getBoundingClientRect();
    const k = Math.min(1, (r.width - 20) / width, (r.height - 20) / height);
    if (k >= 0.5) return this.pz.fit(width, height);
    // a tall or wide graph: start readable at its beginning rather than as a speck
    const kk = 0.75;
    const horizontal = this.data.direction === 'LR';
    return this.pz.set(kk, horizontal ? 10 : Math.max(10, (r.width - width * kk) / 2), horizontal ? Math.max(10, (r.height - height * kk) / 2) : 10);
  }

  fit() {
    if (this.data) return this.pz.fit(this.data.width, this.data.height, 2);
    return null;
  }

  actualSize() {
    const r = this.element.getBoundingClientRect();
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

  /** The pan/zoom keys (arrows, + and -, 0 to fit, 1 for 100%): true if `e` was one, done. */
  panZoomKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return false;
    const keys = {
      ArrowLeft: () => this.pz.panBy(PAN_STEP, 0), ArrowRight: () => this.pz.panBy(-PAN_STEP, 0),
      ArrowUp: () => this.pz.panBy(0, PAN_STEP), ArrowDown: () => this.pz.panBy(0, -PAN_STEP),
      '+': () => this.pz.zoomCenter(1.25), '=': () => this.pz.zoomCenter(1.25),
      '-': () => this.pz.zoomCenter(0.8), 0: () => this.fit(), 1: () => this.actualSize(),
    };
    const fn = keys[e.key];
    if (!fn) return false;
    e.preventDefault();
    fn();
    return true;
  }
}
