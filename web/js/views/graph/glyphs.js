// A glyph atlas for the WebGL drawing, made at run time on a 2D canvas (no font file or image
// is fetched): the drawing's monospace font, regular and bold, one cell per character. Every
// character of a monospace font advances the same, so laying out a label is arithmetic and
// a label is a run of instances (left, top, scale, glyph) the shader turns into quads.
import { FONT } from './colors.js';

const PX = 32; // the atlas's font size; labels of 9-12 px are drawn scaled down (mipmapped)
const PAD = 3;
const COLS = 32;
const FIRST = 32; // printable ASCII is drawn up front; other characters when first seen
const LAST = 126;
// ...and the others our own labels use (an expanded frame's "− title", a cut label's "…",
// a shape's "1×3×224", an initializer's "⟨shape⟩"): a character first seen re-uploads the
// whole atlas, which otherwise happened on the first expand, in the middle of drawing it
const OURS = '−…×⟨⟩';

export class GlyphAtlas {
  constructor() {
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = `${PX}px ${FONT}`;
    this.advance = probe.measureText('M').width; // at PX; a label of size s advances s/PX of it
    this.cellW = Math.ceil(this.advance) + 2 * PAD;
    this.cellH = Math.ceil(PX * 1.3) + 2 * PAD;
    this.ascent = PAD + Math.round(PX * 0.95); // baseline from the cell's top
    this.rows = 16; // grows when full
    this.canvas = document.createElement('canvas');
    this.canvas.width = COLS * this.cellW;
    this.canvas.height = this.rows * this.cellH;
    this.ctx = this.canvas.getContext('2d');
    this.index = new Map(); // `${bold ? 'b' : 'r'}${char}` -> glyph number
    this.dirty = true;
    for (const bold of [false, true]) {
      for (let c = FIRST; c <= LAST; c += 1) this.glyph(String.fromCharCode(c), bold);
      for (const ch of OURS) this.glyph(ch, bold);
    }
  }

  get cols() { return COLS; }

  /** The glyph number of `ch` in the regular or bold face, drawn into the atlas if new. */
  glyph(ch, bold) {
    const key = (bold ? 'b' : 'r') + ch;
    let n = this.index.get(key);
    if (n !== undefined) return n;
    n = this.index.size;
    if (Math.floor(n / COLS) >= this.rows) this.#grow();
    this.index.set(key, n);
    const x = (n % COLS) * this.cellW;
    const y = Math.floor(n / COLS) * this.cellH;
    const g = this.ctx;
    g.font = `${bold ? '700 ' : ''}${PX}px ${FONT}`;
    g.fillStyle = '#fff'; // white coverage; the shader colours it
    g.textBaseline = 'alphabetic';
    g.fillText(ch, x + PAD, y + this.ascent);
    this.dirty = true;
    return n;
  }

  #grow() {
    const old = this.canvas;
    this.rows *= 2;
    this.canvas = document.createElement('canvas');
    this.canvas.width = old.width;
    this.canvas.height = this.rows * this.cellH;
    this.ctx = this.canvas.getContext('2d');
    this.ctx.drawImage(old, 0, 0);
  }

  /**
   * Append the glyphs of `text` to `out` (a GlyphRun): font size `size` (graph px), baseline
   * at y, starting at x (anchor 'start') or centred on x ('middle'), at most `maxWidth` wide
   * (cut with '…'). `color` is a packed 0xAABBGGRR.
   */
  layout(out, text, x, y, size, { bold = false, anchor = 'start', maxWidth = Infinity, color }) {
    const scale = size / PX;
    const adv = this.advance * scale;
    let chars = [...text];
    const fits = Math.max(0, Math.floor(maxWidth / adv));
    if (chars.length > fits) chars = fits > 1 ? chars.slice(0, fits - 1).concat('…') : [];
    if (!chars.length) return;
    let left = anchor === 'middle' ? x - (chars.length * adv) / 2 : x;
    const top = y - this.ascent * scale;
    for (const ch of chars) {
      if (ch !== ' ') out.push(left - PAD * scale, top, scale, this.glyph(ch, bold), color);
      left += adv;
    }
  }
}

/** A growable list of glyph instances: 4 floats (left, top, scale, glyph) and a colour each;
 *  positions are stored relative to the origin given to clear() (float32 precision). */
export class GlyphRun {
  constructor(capacity = 4096) {
    this.f = new Float32Array(capacity * 4);
    this.c = new Uint32Array(capacity);
    this.length = 0;
    this.ox = 0;
    this.oy = 0;
  }

  clear(origin = [0, 0]) {
    this.length = 0;
    [this.ox, this.oy] = origin;
  }

  push(left, top, scale, glyph, color) {
    if (this.length === this.c.length) {
      const f = new Float32Array(this.f.length * 2);
      f.set(this.f);
      const c = new Uint32Array(this.c.length * 2);
      c.set(this.c);
      this.f = f;
      this.c = c;
    }
    const i = this.length;
    this.f[i * 4] = left - this.ox;
    this.f[i * 4 + 1] = top - this.oy;
    this.f[i * 4 + 2] = scale;
    this.f[i * 4 + 3] = glyph;
    this.c[i] = color;
    this.length += 1;
  }
}
