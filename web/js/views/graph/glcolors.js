// Colours as the WebGL drawing keeps them: one Uint32 each (0xAABBGGRR, the byte order of
// a Uint32 in memory), so that a box's fill and stroke go to the GPU as four bytes apiece.
import {
  colorsOf, TEXT_COLOR, EDGE_COLOR, FRAME_STROKE, FRAME_FILL, FRAME_TEXT, LABEL_COLOR,
} from './colors.js';

/** '#rrggbb' or 'rgba(r,g,b,a)' -> packed 0xAABBGGRR (the byte order of a Uint32 in memory). */
export function packColor(css, alpha = 1) {
  let r = 0;
  let g = 0;
  let b = 0;
  let a = alpha;
  const m = /^rgba?\(([^)]+)\)$/.exec(css);
  if (m) {
    const parts = m[1].split(',').map(Number);
    [r, g, b] = parts;
    if (parts.length > 3) a *= parts[3];
  } else if (/^#[0-9a-f]{6}$/i.test(css)) {
    r = parseInt(css.slice(1, 3), 16);
    g = parseInt(css.slice(3, 5), 16);
    b = parseInt(css.slice(5, 7), 16);
  }
  return ((Math.round(a * 255) << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

/** The float parts of a color for a uniform: [r, g, b, a] in 0..1. */
export function unpack(c) {
  return [(c & 255) / 255, ((c >>> 8) & 255) / 255, ((c >>> 16) & 255) / 255, (c >>> 24) / 255];
}

/** A darker shade of a packed colour (the hovered box). */
export function shade(c, f) {
  const r = Math.round((c & 255) * f);
  const g = Math.round(((c >>> 8) & 255) * f);
  const b = Math.round(((c >>> 16) & 255) * f);
  return ((c & 0xff000000) | (b << 16) | (g << 8) | r) >>> 0;
}

/** The drawing's fixed colours (colors.js), packed. */
export const packed = {
  text: packColor(TEXT_COLOR), sub: packColor(TEXT_COLOR, 0.8), frameText: packColor(FRAME_TEXT),
  label: packColor(LABEL_COLOR), edge: packColor(EDGE_COLOR), frameFill: packColor(FRAME_FILL),
  frameStroke: packColor(FRAME_STROKE),
};

const byCategory = new Map(); // category -> [fill, stroke], packed

/** A category's [fill, stroke] (colorsOf), packed; made once per category. */
export function packedColorsOf(category) {
  let found = byCategory.get(category);
  if (found === undefined) {
    found = colorsOf(category).map((c) => packColor(c));
    byCategory.set(category, found);
  }
  return found;
}
