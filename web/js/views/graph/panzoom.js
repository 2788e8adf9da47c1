// Pan and zoom of a drawing: wheel (and a trackpad's pinch, sent as ctrl+wheel) zooms around
// the cursor, dragging the background pans, two touching fingers pinch, keys do both. The
// transform is applied once per animation frame: set as a <g>'s transform (`viewport`, the
// SVG drawing) and/or handed to onZoom (the WebGL drawing redraws there).
const MIN_K = 0.00001; // a 100,000-op chain is millions of px long: fit must reach it
const MAX_K = 8;

export class PanZoom {
  constructor(svg, viewport, { onZoom } = {}) {
    this.svg = svg;
    this.viewport = viewport;
    this.onZoom = onZoom || (() => {});
    this.k = 1;
    this.tx = 0;
    this.ty = 0;
    this.frame = 0;
    this.drag = null;
    this.touches = new Map(); // pointerId -> [x, y] of the touch pointers down (pinch)
    this.listeners = [];
    this.#listen(svg, 'wheel', (e) => this.#wheel(e), { passive: false });
    this.#listen(svg, 'pointerdown', (e) => this.#down(e));
    this.#listen(svg, 'pointermove', (e) => this.#move(e));
    this.#listen(svg, 'pointerup', (e) => this.#up(e));
    this.#listen(svg, 'pointercancel', (e) => this.#up(e));
  }

  #listen(target, type, fn, opts) {
    target.addEventListener(type, fn, opts);
    this.listeners.push(() => target.removeEventListener(type, fn, opts));
  }

  destroy() {
    this.listeners.forEach((off) => off());
    cancelAnimationFrame(this.frame);
  }

  /** Schedule the transform for the next frame; resolves once it has been applied. */
  apply() {
    if (!this.pending) {
      this.pending = new Promise((resolve) => {
        this.frame = requestAnimationFrame(() => {
          if (this.viewport) this.viewport.setAttribute('transform', `translate(${this.tx},${this.ty}) scale(${this.k})`);
          this.pending = null;
          this.onZoom(this.k);
          resolve();
        });
      });
    }
    return this.pending;
  }

  set(k, tx, ty) {
    this.k = Math.min(MAX_K, Math.max(MIN_K, k));
    this.tx = tx;
    this.ty = ty;
    return this.apply();
  }

  /** Zoom by `factor` keeping the screen point (cx, cy) fixed. */
  zoomAt(factor, cx, cy) {
    const k = Math.min(MAX_K, Math.max(MIN_K, this.k * factor));
    const f = k / this.k;
    return this.set(k, cx - (cx - this.tx) * f, cy - (cy - this.ty) * f);
  }

  zoomCenter(factor) {
    const r = this.svg.getBoundingClientRect();
    return this.zoomAt(factor, r.width / 2, r.height / 2);
  }

  panBy(dx, dy) {
    return this.set(this.k, this.tx + dx, this.ty + dy);
  }

  /** Fit the box (graph coordinates) into the view; `maxK` caps the zoom. */
  fit(width, height, maxK = 1) {
    const r = this.svg.getBoundingClientRect();
    const k = Math.min(maxK, (r.width - 20) / Math.max(width, 1), (r.height - 20) / Math.max(height, 1));
    const kk = Math.min(MAX_K, Math.max(MIN_K, k));
    return this.set(kk, (r.width - width * kk) / 2, (r.height - height * kk) / 2);
  }

  /** Put graph point (x, y) at the center of the view. */
  centerOn(x, y, k = this.k) {
    const r = this.svg.getBoundingClientRect();
    return this.set(k, r.width / 2 - x * k, r.height / 2 - y * k);
  }

  /** Screen (client) point -> graph coordinates. */
  toGraph(clientX, clientY, box = null) {
    const r = box || this.svg.getBoundingClientRect(); // `box`: the element's box, read already
    return [(clientX - r.left - this.tx) / this.k, (clientY - r.top - this.ty) / this.k];
  }

  #wheel(event) {
    event.preventDefault();
    const r = this.svg.getBoundingClientRect();
    if (event.ctrlKey || !event.shiftKey) {
      const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
      this.zoomAt(Math.exp(-delta * 0.0015), event.clientX - r.left, event.clientY - r.top);
    } else {
      this.panBy(-event.deltaX, -event.deltaY);
    }
  }

  #down(event) {
    if (event.pointerType === 'touch') this.touches.set(event.pointerId, [event.clientX, event.clientY]);
    if (this.touches.size === 2) {
      this.drag = null; // two fingers: a pinch, not a pan
      return;
    }
    if (event.button !== 0) return;
    this.drag = { x: event.clientX, y: event.clientY, tx: this.tx, ty: this.ty, moved: false, id: event.pointerId };
  }

  /** Two touch pointers: zoom by the change of their distance around their midpoint. */
  #pinch(event) {
    const before = [...this.touches.values()];
    this.touches.set(event.pointerId, [event.clientX, event.clientY]);
    const after = [...this.touches.values()];
    const dist = (p) => Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
    if (dist(before) < 1) return;
    const r = this.svg.getBoundingClientRect();
    const cx = (after[0][0] + after[1][0]) / 2 - r.left;
    const cy = (after[0][1] + after[1][1]) / 2 - r.top;
    this.zoomAt(dist(after) / dist(before), cx, cy);
  }

  #move(event) {
    if (this.touches.has(event.pointerId) && this.touches.size === 2) {
      this.#pinch(event);
      return;
    }
    const d = this.drag;
    if (!d || d.id !== event.pointerId) return;
    const dx = event.clientX - d.x;
    const dy = event.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 4) return;
    if (!d.moved) {
      d.moved = true;
      this.svg.setPointerCapture(event.pointerId);
      this.svg.classList.add('panning');
    }
    this.set(this.k, d.tx + dx, d.ty + dy);
  }

  #up(event) {
    this.touches.delete(event.pointerId);
    const d = this.drag;
    if (!d || d.id !== event.pointerId) return;
    this.drag = null;
    this.svg.classList.remove('panning');
    if (d.moved) {
      // swallow the click that ends a drag, so panning never toggles a group
      const stop = (e) => {
        e.stopPropagation();
        e.preventDefault();
      };
      this.svg.addEventListener('click', stop, { capture: true, once: true });
      setTimeout(() => this.svg.removeEventListener('click', stop, { capture: true }), 0);
    }
  }
}
