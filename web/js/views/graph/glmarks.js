// The marks on the WebGL drawing's boxes: selection and keyboard cursor, find's matches and
// current match, the diff's outlines, the node values' fills and badges, and the hovered
// box. Each mark rewrites a box's colours and stroke in the scene's arrays (glscene.js) and
// re-uploads only the boxes it touched. `c` is the GLCanvas whose marks these are.
import { packColor, shade } from './glcolors.js';
import { RECT_FLOATS } from './glrender.js';

// Highlights, as in graph.css for the SVG drawing: [stroke, width (graph px), least px]
const SELECTED = ['#2f6fde', 3, 2.5];
const CURRENT = ['#e8590c', 4, 3];
const MATCH = ['#e8a100', 3, 2.5];
const OUTLINE_WIDTH = 4;

/** Write node i's colours and stroke from its base, style and highlights. */
function paint(c, i) {
  const n = c.data.nodes[i];
  const r = c.boxRect[i];
  const style = c.styles.get(n.id);
  let fill = style && style.fill ? packColor(style.fill) : c.baseFill[i];
  if (i === c.hover) fill = shade(fill, 0.93);
  let mark = null;
  if (n.id === c.current) mark = CURRENT; // as in graph.css: the find's current wins
  else if (n.id === c.selected || n.id === c.cursor) mark = SELECTED;
  else if (c.matches.has(n.id)) mark = MATCH;
  else if (c.outlines.has(n.id)) mark = [c.outlines.get(n.id), OUTLINE_WIDTH, 3];
  const o = r * RECT_FLOATS;
  c.rects[o + 5] = mark ? mark[1] : c.baseWidth[i];
  c.rects[o + 6] = mark ? mark[2] : 0;
  c.rectColors[r * 2] = fill;
  c.rectColors[r * 2 + 1] = mark ? packColor(mark[0]) : c.baseStroke[i];
  return r;
}

/** The ids whose boxes differ from their base look now. */
function marked(c) {
  const ids = new Set([c.selected, c.cursor, c.current, ...c.matches, ...c.outlines.keys(), ...c.styles.keys()]);
  ids.delete(null);
  ids.delete(undefined);
  return ids;
}

/** Apply `change` (of the marks) and repaint the boxes it touched: one by one when few,
 *  all at once (one upload) when many, e.g. a colouring of every node. */
export function updateMarks(c, change) {
  const before = marked(c);
  change();
  if (!c.data) return;
  const ids = marked(c);
  for (const id of before) ids.add(id);
  if (ids.size > 2000) {
    for (let i = 0; i < c.data.nodes.length; i += 1) paint(c, i);
    c.renderer.updateRects(c.rects, c.rectColors);
  } else {
    repaint(c, ids);
  }
  c.labelsFor = null; // badges may have changed
  c.schedule();
}

/** Repaint the boxes of `ids` (node ids or indices), one upload each. */
export function repaint(c, ids) {
  if (!c.data) return;
  for (const id of ids) {
    const i = typeof id === 'number' ? id : c.index.get(id);
    if (i === undefined || i < 0) continue;
    const r = paint(c, i);
    c.renderer.updateRects(c.rects, c.rectColors, r, r + 1);
  }
  c.schedule();
}

