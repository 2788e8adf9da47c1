// A uniform grid over the boxes of a drawn view, built in one pass into flat typed arrays:
// which box is under the pointer, and which boxes are in a rectangle (the labels to draw),
// without looking at 100,000 boxes each time.
export class HitGrid {
  /** boxes: [{x, y, w, h}], in graph coordinates. */
  constructor(boxes) {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    let area = 0;
    for (const b of boxes) {
      x0 = Math.min(x0, b.x);
      y0 = Math.min(y0, b.y);
      x1 = Math.max(x1, b.x + b.w);
      y1 = Math.max(y1, b.y + b.h);
      area += b.w * b.h;
    }
    const n = boxes.length;
    if (!n) [x0, y0, x1, y1] = [0, 0, 1, 1];
    // cells about twice a box's side: a box touches at most 4 cells, a cell holds a few boxes
    this.cell = Math.max(50, 2 * Math.sqrt(area / Math.max(n, 1)));
    this.x0 = x0;
    this.y0 = y0;
    this.nx = Math.max(1, Math.ceil((x1 - x0) / this.cell) + 1);
    this.ny = Math.max(1, Math.ceil((y1 - y0) / this.cell) + 1);
    while (this.nx * this.ny > 4 * n + 1024) { // huge empty spans: coarser cells
      this.cell *= 2;
      this.nx = Math.ceil(this.nx / 2);
      this.ny = Math.ceil(this.ny / 2);
    }
    this.boxes = boxes;
    const counts = new Int32Array(this.nx * this.ny + 1);
    this.#each(boxes, (c) => { counts[c + 1] += 1; });
    for (let i = 1; i < counts.length; i += 1) counts[i] += counts[i - 1];
    this.start = counts.slice();
    this.items = new Int32Array(counts[counts.length - 1]);
    const fill = counts; // reused as the write cursor of each cell
    this.#each(boxes, (c, i) => { this.items[fill[c]] = i; fill[c] += 1; });
    this.stamp = new Uint32Array(n);
    this.epoch = 0;
  }

  #span(v0, v1, origin, count) {
    const a = Math.max(0, Math.min(count - 1, Math.floor((v0 - origin) / this.cell)));
    const b = Math.max(0, Math.min(count - 1, Math.floor((v1 - origin) / this.cell)));
    return [a, b];
  }

  #each(boxes, fn) {
    for (let i = 0; i < boxes.length; i += 1) {
      const b = boxes[i];
      const [cx0, cx1] = this.#span(b.x, b.x + b.w, this.x0, this.nx);
      const [cy0, cy1] = this.#span(b.y, b.y + b.h, this.y0, this.ny);
      for (let cy = cy0; cy <= cy1; cy += 1) {
        for (let cx = cx0; cx <= cx1; cx += 1) fn(cy * this.nx + cx, i);
      }
    }
  }

  /** The index of the topmost box holding graph point (x, y), or -1. */
  at(x, y) {
    const cx = Math.floor((x - this.x0) / this.cell);
    const cy = Math.floor((y - this.y0) / this.cell);
    if (cx < 0 || cy < 0 || cx >= this.nx || cy >= this.ny) return -1;
    const c = cy * this.nx + cx;
    let hit = -1;
    for (let j = this.start[c]; j < this.start[c + 1]; j += 1) {
      const i = this.items[j];
      const b = this.boxes[i];
      if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h && i > hit) hit = i;
    }
    return hit;
  }

  /** Indices of the boxes meeting rectangle [x0, y0, x1, y1] (each once), at most `limit`. */
  within(x0, y0, x1, y1, limit = Infinity) {
    this.epoch += 1;
    if (this.epoch === 0xffffffff) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    const out = [];
    const [cx0, cx1] = this.#span(x0, x1, this.x0, this.nx);
    const [cy0, cy1] = this.#span(y0, y1, this.y0, this.ny);
    for (let cy = cy0; cy <= cy1; cy += 1) {
      for (let cx = cx0; cx <= cx1; cx += 1) {
        const c = cy * this.nx + cx;
        for (let j = this.start[c]; j < this.start[c + 1]; j += 1) {
          const i = this.items[j];
          if (this.stamp[i] === this.epoch) continue;
          this.stamp[i] = this.epoch;
          const b = this.boxes[i];
          if (b.x > x1 || b.x + b.w < x0 || b.y > y1 || b.y + b.h < y0) continue;
          out.push(i);
          if (out.length >= limit) return out;
        }
      }
    }
    return out;
  }
}
