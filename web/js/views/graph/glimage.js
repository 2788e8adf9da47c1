// The WebGL drawing far out, where boxes are dots and a hundred thousand of them may be on
// screen: the frame is then an image drawn on the CPU and uploaded as one texture, which
// costs less than sending every box as triangles. `c` is the GLCanvas.
import { RECT_FLOATS } from './glrender.js';

// Far out (see farOut): with boxes under FAR_BOX_PX high, an image is drawn when more than
// FAR_ITEMS boxes and segments are on screen (fewer cost the GPU path less than an upload).
const FAR_BOX_PX = 10;
const FAR_ITEMS = 20000;

/**
 * Far out, boxes are dots and there may be a hundred thousand of them on screen: sending
 * them as triangles costs software WebGL a microsecond each. Then the frame is an image
 * drawn here (a pixel or a few per box, edges stepped pixel by pixel), one texture upload.
 */
export function farOut(c, view) {
  if (c.pz.k * c.typicalH >= FAR_BOX_PX) return false;
  let items = 0;
  for (const t of c.tiles) {
    const b = t.box;
    if (b[0] > view[2] || b[2] < view[0] || b[1] > view[3] || b[3] < view[1]) continue;
    items += (t.rects[1] - t.rects[0]) + (t.lines[1] - t.lines[0]) + (t.frames[1] - t.frames[0]);
  }
  return items > FAR_ITEMS;
}

/** The frame for graph rectangle `view` as an image (see farOut). */
export function drawImage(c, view) {
  c.renderer.resize();
  const w = c.element.width;
  const h = c.element.height;
  if (!c.pixels || c.pixels.length !== w * h) c.pixels = new Uint32Array(w * h);
  const px = c.pixels;
  px.fill(c.colors.background | 0xff000000);
  const dpr = w / Math.max(1, c.element.clientWidth);
  const k = c.pz.k * dpr;
  const ox = c.pz.tx * dpr;
  const oy = c.pz.ty * dpr;
  const visible = c.tiles.filter((t) => {
    const b = t.box;
    return !(b[0] > view[2] || b[2] < view[0] || b[1] > view[3] || b[3] < view[1]);
  });
  const edge = c.colors.edge | 0xff000000;
  const L = c.lines;
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
  const R = c.rects;
  const C = c.rectColors;
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
  c.renderer.drawImage(new Uint8Array(px.buffer), w, h);
}
