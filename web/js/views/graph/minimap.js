// The minimap: the whole view in a small canvas (every box a dot of its category's colour,
// drawn once per view) with the screen's rectangle over it; a click or drag there moves the
// view. Shown while the drawing is bigger than the screen.
import { el } from '../../shared/dom.js';
import { FRAME_STROKE } from './colors.js';
import { packColor, packedColorsOf } from './glcolors.js';

const W = 180;
const H = 130;

/** The pixels [start, end) that a run from `a` of length `len` covers (at least one). */
function pixels(a, len, size) {
  const start = Math.max(0, Math.floor(a));
  return [start, Math.min(size, Math.max(start + 1, Math.ceil(a + len)))];
}

/** Fill (or, with `outline`, only edge) the pixels of rectangle (x, y, w, h) with `color`. */
function paint(px, x, y, w, h, color, outline) {
  const [x0, x1] = pixels(x, w, W);
  const [y0, y1] = pixels(y, h, H);
  for (let r = y0; r < y1; r += 1) {
    if (!outline || r === y0 || r === y1 - 1) {
      px.fill(color, r * W + x0, r * W + x1);
    } else {
      px[r * W + x0] = color;
      px[r * W + x1 - 1] = color;
    }
  }
}

export class Minimap {
  /** onMove(x, y): centre the view on graph point (x, y). */
  constructor({ onMove }) {
    this.onMove = onMove;
    this.element = el('canvas', {
      class: 'graph-minimap', width: W, height: H, hidden: true,
      'aria-label': 'Minimap of the whole graph: click or drag to move the view', role: 'img',
    });
    this.base = document.createElement('canvas');
    this.base.width = W;
    this.base.height = H;
    this.data = null;
    const go = (e) => {
      if (!this.data) return;
      const r = this.element.getBoundingClientRect();
      const px = ((e.clientX - r.left) / r.width) * W;
      const py = ((e.clientY - r.top) / r.height) * H;
      this.onMove((px - this.ox) / this.s, (py - this.oy) / this.s);
    };
    this.element.addEventListener('pointerdown', (e) => {
      e.stopPropagation();
      this.element.setPointerCapture(e.pointerId);
      go(e);
    });
    this.element.addEventListener('pointermove', (e) => { if (e.buttons) go(e); });
    this.element.addEventListener('click', (e) => e.stopPropagation());
  }

  /** Draw the view `data` into the base image (once per view), pixel by pixel: at this
   *  size a box is a pixel or a few, and 100,000 canvas fillRects took 200 ms. */
  setData(data) {
    this.data = data;
    const s = Math.min((W - 8) / Math.max(data.width, 1), (H - 8) / Math.max(data.height, 1));
    this.s = s;
    this.ox = (W - data.width * s) / 2;
    this.oy = (H - data.height * s) / 2;
    const g = this.base.getContext('2d');
    const image = g.createImageData(W, H);
    const px = new Uint32Array(image.data.buffer); // 0xAABBGGRR, as packColor makes them
    const frame = packColor(FRAME_STROKE, 0.5);
    for (const f of data.frames) paint(px, this.ox + f.x * s, this.oy + f.y * s, f.w * s, f.h * s, frame, true);
    for (const n of data.nodes) {
      paint(px, this.ox + n.x * s, this.oy + n.y * s, n.w * s, n.h * s, packedColorsOf(n.category)[1], false);
    }
    g.putImageData(image, 0, 0);
  }

  /** The screen's rectangle over the base: k, tx, ty of the view, its size in css px. */
  update(k, tx, ty, width, height) {
    if (!this.data) return;
    const big = this.data.width * k > width + 1 || this.data.height * k > height + 1;
    this.element.hidden = !big;
    if (!big) return;
    const g = this.element.getContext('2d');
    g.clearRect(0, 0, W, H);
    g.drawImage(this.base, 0, 0);
    const s = this.s;
    const x = this.ox + (-tx / k) * s;
    const y = this.oy + (-ty / k) * s;
    const w = (width / k) * s;
    const h = (height / k) * s;
    g.fillStyle = 'rgba(47,111,222,0.12)';
    g.fillRect(x, y, w, h);
    g.strokeStyle = '#2f6fde';
    g.lineWidth = 1.5;
    g.strokeRect(x, y, Math.max(w, 2), Math.max(h, 2));
  }

  /** Where graph point (x, y) is on the minimap, in css px from its corner (for tests). */
  toMap(x, y) {
    const r = this.element.getBoundingClientRect();
    return [(this.ox + x * this.s) * (r.width / W), (this.oy + y * this.s) * (r.height / H)];
  }
}
