// The scene of the WebGL drawing built from one /api/graph/view answer, in one pass per
// kind: boxes (group frames, collapsed-group shadows, op boxes), edge segments and arrowheads
// as the typed arrays glrender.js uploads, sorted by tile (counting sort) so that each
// tile's items are one range of each buffer and a frame sends only the tiles it sees.
import { packedColorsOf, packed } from './glcolors.js';
import { RECT_FLOATS } from './glrender.js';

const CURVE_STEPS = 3; // straight pieces per rounded corner of an edge

/** A uniform grid of tiles over the drawing: items are grouped by the tile of their centre. */
class Tiling {
  constructor(width, height, count) {
    // about 100 boxes a tile where the graph is dense; at most 200,000 tiles
    this.side = Math.max(256, Math.sqrt((Math.max(width, 1) * Math.max(height, 1)) / Math.max(1, count / 100)));
    for (;;) {
      this.nx = Math.ceil(Math.max(width, 1) / this.side) + 1;
      this.ny = Math.ceil(Math.max(height, 1) / this.side) + 1;
      if (this.nx * this.ny <= 200000) break;
      this.side *= 2;
    }
    this.count = this.nx * this.ny;
    this.boxes = new Float32Array(this.count * 4).fill(NaN); // the union of each tile's items
  }

  /** The corner of tile `key`: its items' coordinates are relative to it (see glrender.js). */
  origin(key) {
    return [(key % this.nx) * this.side, Math.floor(key / this.nx) * this.side];
  }

  key(x, y) {
    const cx = Math.min(this.nx - 1, Math.max(0, Math.floor(x / this.side)));
    const cy = Math.min(this.ny - 1, Math.max(0, Math.floor(y / this.side)));
    return cy * this.nx + cx;
  }

  /** Widen tile `key`'s box to hold the rectangle (x, y, w, h). */
  grow(key, x, y, w, h) {
    const b = this.boxes;
    const o = key * 4;
    if (Number.isNaN(b[o])) {
      b[o] = x;
      b[o + 1] = y;
      b[o + 2] = x + w;
      b[o + 3] = y + h;
      return;
    }
    b[o] = Math.min(b[o], x);
    b[o + 1] = Math.min(b[o + 1], y);
    b[o + 2] = Math.max(b[o + 2], x + w);
    b[o + 3] = Math.max(b[o + 3], y + h);
  }

  box(key) {
    return Array.from(this.boxes.subarray(key * 4, key * 4 + 4));
  }
}

/** How many points smoothInto writes for a route of `n` points (n >= 2). */
function smoothedLength(n) {
  return n < 3 ? n : 2 + (n - 2) * (1 + CURVE_STEPS);
}

/**
 * The route through `points` (flat: x0, y0, x1, y1, ...) as the SVG draws it (render.js's
 * pathData): straight to the middle of the first leg, a quadratic curve round each corner,
 * straight to the end, each curve as CURVE_STEPS straight pieces. Written flat into `xy`
 * from index `o` (smoothedLength points); returns the index after the last. One typed array
 * for all routes: an array per route cost 300 ms and its garbage at 500,000 corners.
 */
function smoothInto(points, xy, o) {
  const last = points.length - 2;
  xy[o] = points[0];
  xy[o + 1] = points[1];
  o += 2;
  for (let i = 2; i < last; i += 2) {
    const cx = points[i];
    const cy = points[i + 1];
    const ax = (points[i - 2] + cx) / 2;
    const ay = (points[i - 1] + cy) / 2;
    const bx = (cx + points[i + 2]) / 2;
    const by = (cy + points[i + 3]) / 2;
    xy[o] = ax;
    xy[o + 1] = ay;
    o += 2;
    for (let k = 1; k <= CURVE_STEPS; k += 1) {
      const t = k / CURVE_STEPS;
      const u = 1 - t;
      xy[o] = u * u * ax + 2 * u * t * cx + t * t * bx;
      xy[o + 1] = u * u * ay + 2 * u * t * cy + t * t * by;
      o += 2;
    }
  }
  xy[o] = points[last];
  xy[o + 1] = points[last + 1];
  return o + 2;
}

/** Where each key's items start once sorted by key (0 <= key < count): starts[key]. */
function keyStarts(keys, count) {
  const starts = new Int32Array(count + 1);
  for (let i = 0; i < keys.length; i += 1) starts[keys[i] + 1] += 1;
  for (let k = 0; k < count; k += 1) starts[k + 1] += starts[k];
  return starts;
}

/** Items sorted by key (0 <= key < count): {order, starts} with starts[key] the first. */
function countingSort(keys, count) {
  const starts = keyStarts(keys, count);
  const next = starts.slice(0, count);
  const order = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i += 1) {
    order[next[keys[i]]] = i;
    next[keys[i]] += 1;
  }
  return { order, starts };
}

/** Every drawn edge's smoothed route in one array: {xy, starts}, route r being the numbers
 *  xy[starts[r]] .. xy[starts[r + 1] - 1] (edges with fewer than 2 points are not drawn). */
function smoothRoutes(edges) {
  let total = 0;
  let count = 0;
  for (const e of edges) {
    if (e.points.length >= 4) {
      total += smoothedLength(e.points.length / 2);
      count += 1;
    }
  }
  const xy = new Float64Array(total * 2);
  const starts = new Int32Array(count + 1);
  let o = 0;
  let r = 0;
  for (const e of edges) {
    if (e.points.length < 4) continue;
    starts[r] = o;
    r += 1;
    o = smoothInto(e.points, xy, o);
  }
  starts[count] = o;
  return { xy, starts };
}

/** Edges as line segments and arrowheads (a triangle at each route's end), by tile. */
function edgesByTile(edges, tiling) {
  const { xy: p, starts } = smoothRoutes(edges);
  const heads = starts.length - 1;
  const segments = starts[heads] / 2 - heads;
  const segKeys = new Int32Array(segments);
  const headKeys = new Int32Array(heads);
  for (let h = 0, s = 0; h < heads; h += 1) {
    const end = starts[h + 1];
    for (let i = starts[h]; i + 3 < end; i += 2) {
      segKeys[s] = tiling.key((p[i] + p[i + 2]) / 2, (p[i + 1] + p[i + 3]) / 2);
      s += 1;
    }
    headKeys[h] = tiling.key(p[end - 2], p[end - 1]);
  }
  const segPos = keyStarts(segKeys, tiling.count);
  const headPos = keyStarts(headKeys, tiling.count);
  const lineAt = segPos.slice();
  const arrowAt = headPos.slice();
  const lines = new Float32Array(segments * 4);
  const arrows = new Float32Array(heads * 6);
  const { nx, side } = tiling;
  for (let h = 0, s = 0; h < heads; h += 1) {
    const end = starts[h + 1];
    for (let i = starts[h]; i + 3 < end; i += 2) {
      const key = segKeys[s];
      const o = segPos[key] * 4;
      const ox = (key % nx) * side; // tiling.origin(key), without an array per segment
      const oy = Math.floor(key / nx) * side;
      segPos[key] += 1;
      const x0 = p[i];
      const y0 = p[i + 1];
      const x1 = p[i + 2];
      const y1 = p[i + 3];
      lines[o] = x0 - ox;
      lines[o + 1] = y0 - oy;
      lines[o + 2] = x1 - ox;
      lines[o + 3] = y1 - oy;
      tiling.grow(key, Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
      s += 1;
    }
    const tx = p[end - 2];
    const ty = p[end - 1];
    const sx = p[end - 4];
    const sy = p[end - 3];
    const len = Math.hypot(tx - sx, ty - sy) || 1;
    const dx = (tx - sx) / len;
    const dy = (ty - sy) / len;
    const bx = tx - dx * 8;
    const by = ty - dy * 8;
    const key = headKeys[h];
    const ox = (key % nx) * side;
    const oy = Math.floor(key / nx) * side;
    const o = headPos[key] * 6;
    arrows[o] = tx - ox;
    arrows[o + 1] = ty - oy;
    arrows[o + 2] = bx - dy * 3.5 - ox;
    arrows[o + 3] = by + dx * 3.5 - oy;
    arrows[o + 4] = bx + dy * 3.5 - ox;
    arrows[o + 5] = by - dx * 3.5 - oy;
    headPos[key] += 1;
    tiling.grow(key, tx - 9, ty - 9, 18, 18);
  }
  return { lines, lineAt, arrows, arrowAt };
}

/**
 * The scene of view `data`: rects and colors (RECT_FLOATS and two packed colours a box),
 * lines and arrows (segments and triangles), tiles (each item kind's [start, end) by tile,
 * see GLRenderer.setScene); per node its box slot (boxRect) and its look before any mark
 * (baseFill, baseStroke, baseWidth); index: node id -> index; typicalH: the mean box height.
 */
export function buildScene(data) {
  const nodes = data.nodes;
  const frames = data.frames;
  const index = new Map();
  let groups = 0;
  nodes.forEach((n, i) => {
    index.set(n.id, i);
    if (n.type === 'group') groups += 1;
  });
  const tiling = new Tiling(data.width, data.height, nodes.length);
  const frameSort = countingSort(frames.map((f) => tiling.key(f.x + f.w / 2, f.y + f.h / 2)), tiling.count);
  const nodeSort = countingSort(nodes.map((n) => tiling.key(n.x + n.w / 2, n.y + n.h / 2)), tiling.count);
  const total = frames.length + groups + nodes.length;
  const rects = new Float32Array(total * RECT_FLOATS);
  const colors = new Uint32Array(total * 2);
  const put = (r, x, y, w, h, radius, stroke, fill, strokeColor) => {
    const o = r * RECT_FLOATS;
    rects[o] = x;
    rects[o + 1] = y;
    rects[o + 2] = w;
    rects[o + 3] = h;
    rects[o + 4] = radius;
    rects[o + 5] = stroke;
    colors[r * 2] = fill;
    colors[r * 2 + 1] = strokeColor;
  };
  let r = 0;
  const frameAt = new Int32Array(tiling.count + 1); // first box slot of each tile's frames
  for (let key = 0, j = 0; key < tiling.count; key += 1) {
    frameAt[key] = r;
    const [ox, oy] = tiling.origin(key);
    for (; j < frameSort.starts[key + 1]; j += 1) {
      const f = frames[frameSort.order[j]];
      put(r, f.x - ox, f.y - oy, f.w, f.h, 8, 1, packed.frameFill, packed.frameStroke);
      rects[r * RECT_FLOATS + 7] = 1; // dashed, as the SVG frames
      tiling.grow(key, f.x, f.y, f.w, f.h);
      r += 1;
    }
  }
  frameAt[tiling.count] = r;
  const boxRect = new Int32Array(nodes.length);
  const baseFill = new Uint32Array(nodes.length);
  const baseStroke = new Uint32Array(nodes.length);
  const baseWidth = new Float32Array(nodes.length);
  const nodeAt = new Int32Array(tiling.count + 1);
  let hsum = 0;
  for (let key = 0, j = 0; key < tiling.count; key += 1) {
    nodeAt[key] = r;
    const [ox, oy] = tiling.origin(key);
    for (; j < nodeSort.starts[key + 1]; j += 1) {
      const i = nodeSort.order[j];
      const n = nodes[i];
      hsum += n.h;
      const [fill, stroke] = packedColorsOf(n.category);
      const radius = n.type === 'input' || n.type === 'output' ? n.h / 2 : 5;
      const group = n.type === 'group';
      if (group) {
        put(r, n.x + 3 - ox, n.y + 3 - oy, n.w, n.h, radius, 1, fill, stroke); // the stack behind
        r += 1;
      }
      boxRect[i] = r;
      baseFill[i] = fill;
      baseStroke[i] = stroke;
      baseWidth[i] = group ? 1.5 : 1;
      put(r, n.x - ox, n.y - oy, n.w, n.h, radius, baseWidth[i], fill, stroke);
      tiling.grow(key, n.x, n.y, n.w + (group ? 3 : 0), n.h + (group ? 3 : 0));
      r += 1;
    }
  }
  nodeAt[tiling.count] = r;
  const typicalH = nodes.length ? hsum / nodes.length : 40;
  const { lines, lineAt, arrows, arrowAt } = edgesByTile(data.edges, tiling);
  const tiles = [];
  for (let key = 0; key < tiling.count; key += 1) {
    const t = {
      box: tiling.box(key), origin: tiling.origin(key), frames: [frameAt[key], frameAt[key + 1]], rects: [nodeAt[key], nodeAt[key + 1]],
      lines: [lineAt[key], lineAt[key + 1]], arrows: [arrowAt[key], arrowAt[key + 1]],
    };
    if (t.frames[1] > t.frames[0] || t.rects[1] > t.rects[0] || t.lines[1] > t.lines[0]) tiles.push(t);
  }
  return {
    rects, colors, lines, arrows, tiles, index, boxRect, baseFill, baseStroke, baseWidth, typicalH,
  };
}
