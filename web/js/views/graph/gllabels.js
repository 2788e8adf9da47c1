// The text of the WebGL drawing: group frame titles, edge labels, node titles, subtitles,
// attribute lines and value badges, laid out as glyph quads (glyphs.js) for the boxes near
// the screen only, and only at a zoom where they are legible. `c` is the GLCanvas.
import { packed } from './glcolors.js';
import { PAD_X, PAD_Y, TITLE_H, LINE_H, labelPoint } from './render.js';

// Label levels by zoom: a 12 px title is legible from about 4 px on screen
const TITLES_FROM = 0.33;
const DETAILS_FROM = 0.5;
const EDGE_LABELS_FROM = 0.65;
const MAX_LABELLED = 3000; // boxes labelled at once (more would not be legible anyway)

/** Rebuild the label glyphs when the view left the labelled area or the level changed. */
export function updateLabels(c) {
  const k = c.pz.k;
  const level = k < TITLES_FROM ? 0 : k < DETAILS_FROM ? 1 : k < EDGE_LABELS_FROM ? 2 : 3;
  const [x0, y0, x1, y1] = c.visibleRect();
  const have = c.labelsFor;
  if (have && have.level === level && (level === 0 || (x0 >= have.rect[0] && y0 >= have.rect[1]
      && x1 <= have.rect[2] && y1 <= have.rect[3]))) return;
  // a margin, so that panning rebuilds the glyphs now and then, not every frame; a small
  // one, since every glyph is two triangles that software WebGL pays for in each frame
  const mx = (x1 - x0) * 0.25;
  const my = (y1 - y0) * 0.25;
  const rect = [x0 - mx, y0 - my, x1 + mx, y1 + my];
  c.labelsFor = { level, rect };
  const run = c.run;
  // relative to the labelled area's corner, for float32 precision (see glrender.js)
  const origin = [Math.floor(rect[0]), Math.floor(rect[1])];
  run.clear(origin);
  if (level > 0) layoutLabels(c, run, rect, level);
  c.renderer.setGlyphs(run, c.atlas, origin);
}

/** Lay out into `run` the labels in graph rectangle `rect` at label level `level` (1-3). */
function layoutLabels(c, run, rect, level) {
  const atlas = c.atlas;
  const [x0, y0, x1, y1] = rect;
  for (const f of c.data.frames) {
    if (f.x > x1 || f.x + f.w < x0 || f.y > y1 || f.y + f.h < y0) continue;
    atlas.layout(run, `− ${f.label}`, f.x + 8, f.y + 14, 11, { bold: true, maxWidth: f.w - 12, color: packed.frameText });
  }
  if (level >= 3) {
    const seen = new Set();
    const horizontal = c.data.direction === 'LR';
    for (const e of c.data.edges) {
      if (!e.label || !e.points.length) continue;
      const x = e.points[0];
      const y = e.points[1];
      if (x < x0 || x > x1 || y < y0 || y > y1) continue;
      const key = `${e.from}\u0000${e.tensor}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const [lx, ly] = labelPoint(e.points, horizontal);
      atlas.layout(run, e.label, lx, ly, 9, { color: packed.label });
    }
  }
  const nodes = c.data.nodes;
  for (const i of c.grid.within(x0, y0, x1, y1, MAX_LABELLED)) {
    const n = nodes[i];
    const cx = n.x + n.w / 2;
    atlas.layout(run, n.title, cx, n.y + PAD_Y + 13, 12, { bold: true, anchor: 'middle', maxWidth: n.w - 4, color: packed.text });
    const style = c.styles.get(n.id);
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
