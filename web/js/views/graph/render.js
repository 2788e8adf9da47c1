// Draw one visible graph (the JSON of /api/graph/view) as SVG. Positions and sizes come from
// the server, so nothing is measured here; text goes in through textContent only.
import {
  colorsOf, TEXT_COLOR, EDGE_COLOR, FRAME_STROKE, FRAME_FILL, FRAME_TEXT, LABEL_COLOR, FONT,
} from './colors.js';
import { nodeLabel, nodeTooltip } from './glkeys.js';

const NS = 'http://www.w3.org/2000/svg';
// The text layout inside a box, shared with the WebGL drawing (glcanvas.js)
export const PAD_X = 8;
export const PAD_Y = 5;
export const TITLE_H = 18;
export const LINE_H = 13;
export const HEAD_H = 20; // a group frame's clickable header

/** The width of a frame's clickable header ("− label"). */
export function headWidth(frame) {
  return Math.min(frame.w, 30 + frame.label.length * 7.2);
}

function svgEl(tag, attrs = {}, text = null) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

/** A smooth path through the route `points` (flat: x0, y0, x1, y1, ...; quadratic corners
 *  stay inside the polyline). */
export function pathData(points) {
  if (!points.length) return '';
  const n = points.length / 2;
  const at = (i) => `${points[2 * i]},${points[2 * i + 1]}`;
  const mid = (i) => `${(points[2 * i] + points[2 * i + 2]) / 2},${(points[2 * i + 1] + points[2 * i + 3]) / 2}`;
  if (n < 3) return polyline(points);
  let d = `M${at(0)}L${mid(0)}`;
  for (let i = 1; i < n - 1; i += 1) d += `Q${at(i)} ${mid(i)}`;
  return `${d}L${at(n - 1)}`;
}

function drawFrame(frame) {
  const g = svgEl('g', {
    class: 'frame', 'data-id': frame.id, 'data-path': frame.path,
    transform: `translate(${frame.x},${frame.y})`,
  });
  g.append(svgEl('rect', {
    width: frame.w, height: frame.h, rx: 8, fill: FRAME_FILL, stroke: FRAME_STROKE,
    'stroke-dasharray': '5 3', 'stroke-width': 1,
  }));
  // focusable, but out of the page's Tab order: Tab inside the drawing moves in reading
  // order (canvas.js), so the drawing is one stop of the page's, as the WebGL one is
  const head = svgEl('g', {
    class: 'frame-head', tabindex: -1, role: 'button',
    'aria-label': `Collapse group ${frame.label}`, 'aria-expanded': 'true',
  });
  head.append(svgEl('rect', { width: headWidth(frame), height: HEAD_H, fill: 'transparent' }));
  head.append(svgEl('text', {
    x: 8, y: 14, fill: FRAME_TEXT, 'font-family': FONT, 'font-size': 11, 'font-weight': 600,
  }, `− ${frame.label}`));
  g.append(head);
  return g;
}

function drawNode(item) {
  const [fill, stroke] = colorsOf(item.category);
  const isGroup = item.type === 'group';
  const g = svgEl('g', {
    class: `node cat-${item.category}${isGroup ? ' group' : ''}`, 'data-id': item.id,
    transform: `translate(${item.x},${item.y})`, tabindex: -1, role: 'button', 'aria-label': nodeLabel(item),
  });
  if (isGroup) g.setAttribute('aria-expanded', 'false');
  g.append(svgEl('title', {}, nodeTooltip(item))); // the hover tooltip: the full name (or path)
  const rx = item.type === 'input' || item.type === 'output' ? item.h / 2 : 5;
  if (isGroup) {
    g.append(svgEl('rect', { x: 3, y: 3, width: item.w, height: item.h, rx, fill, stroke, 'stroke-width': 1 }));
  }
  g.append(svgEl('rect', {
    class: 'box', width: item.w, height: item.h, rx, fill, stroke, 'stroke-width': isGroup ? 1.5 : 1,
  }));
  let y = PAD_Y + 13;
  g.append(svgEl('text', {
    x: item.w / 2, y, 'text-anchor': 'middle', fill: TEXT_COLOR, 'font-family': FONT,
    'font-size': 12, 'font-weight': 700,
  }, item.title));
  y = PAD_Y + TITLE_H;
  if (item.subtitle) {
    y += LINE_H;
    g.append(svgEl('text', {
      class: 'sub', x: item.w / 2, y: y - 3, 'text-anchor': 'middle', fill: TEXT_COLOR,
      'font-family': FONT, 'font-size': 10, opacity: 0.8,
    }, item.subtitle));
  }
  for (const [key, value] of item.lines) {
    y += LINE_H;
    const t = svgEl('text', {
      class: 'line', x: PAD_X, y: y - 3, fill: TEXT_COLOR, 'font-family': FONT, 'font-size': 10,
    });
    t.append(svgEl('tspan', { 'font-weight': 700 }, key));
    t.append(document.createTextNode(` = ${value}`));
    g.append(t);
  }
  return g;
}

/** Where an edge's shape label goes: beside the start of its route (flat points). */
export function labelPoint(points, horizontal) {
  const x = points[0];
  const y = points[1];
  return horizontal ? [x + 4, y - 4] : [x + 4, y + 12];
}

const TILE = 800; // graph px; elements are grouped into tiles so off-screen ones can be culled

/** The tile of an element spanning (x0, y0)-(x1, y1): 'big' for one bigger than a tile. */
export function tileKey(x0, y0, x1, y1) {
  const big = x1 - x0 > TILE || y1 - y0 > TILE;
  return big ? 'big' : `${Math.floor((x0 + x1) / 2 / TILE)},${Math.floor((y0 + y1) / 2 / TILE)}`;
}

/** Groups the elements of one layer by tile; elements bigger than a tile stay always shown. */
class TiledLayer {
  constructor(layer, tiles) {
    this.layer = layer;
    this.tiles = tiles; // shared: key -> {box: [x0, y0, x1, y1], groups: [<g>]}
    this.groups = new Map();
  }

  add(node, x0, y0, x1, y1) {
    const key = tileKey(x0, y0, x1, y1);
    let g = this.groups.get(key);
    if (!g) {
      g = svgEl('g', { 'data-tile': key });
      this.groups.set(key, g);
      this.layer.append(g);
      if (!this.tiles.has(key)) this.tiles.set(key, { box: [x0, y0, x1, y1], groups: [], layers: [], shown: true });
      this.tiles.get(key).groups.push(g);
      this.tiles.get(key).layers.push(this.layer);
    }
    const box = this.tiles.get(key).box;
    box[0] = Math.min(box[0], x0);
    box[1] = Math.min(box[1], y0);
    box[2] = Math.max(box[2], x1);
    box[3] = Math.max(box[3], y1);
    g.append(node);
  }
}

/** An SVG path straight through flat `points`. */
function polyline(points) {
  let d = `M${points[0]},${points[1]}`;
  for (let i = 2; i < points.length; i += 2) d += `L${points[i]},${points[i + 1]}`;
  return d;
}

function bounds(points) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < points.length; i += 2) {
    x0 = Math.min(x0, points[i]);
    y0 = Math.min(y0, points[i + 1]);
    x1 = Math.max(x1, points[i]);
    y1 = Math.max(y1, points[i + 1]);
  }
  return [x0, y0, x1, y1];
}

/** The drawing's four layers, empty: group frames, edges, edge labels, nodes. */
export function drawingLayers() {
  return [
    svgEl('g', { class: 'frames' }),
    svgEl('g', {
      class: 'edges', fill: 'none', stroke: EDGE_COLOR, 'stroke-width': 1.2,
      'marker-end': 'url(#graph-arrow)',
    }),
    svgEl('g', { class: 'edge-labels', fill: LABEL_COLOR, 'font-family': FONT, 'font-size': 9 }),
    svgEl('g', { class: 'nodes' }),
  ];
}

/** The layers of drawingElements' items. */
export const LAYER = { frames: 0, edges: 1, labels: 2, nodes: 3 };

/**
 * The elements of the drawing of `view`, made one at a time in drawing order: each
 * [layer (LAYER), element, x0, y0, x1, y1] (its box, for its tile). drawGraph puts them in the
 * document; an SVG export (download.js) serializes them a slice at a time.
 */
export function* drawingElements(view) {
  const horizontal = view.direction === 'LR';
  for (const f of view.frames) yield [LAYER.frames, drawFrame(f), f.x, f.y, f.x + f.w, f.y + f.h];
  const seen = new Set();
  for (const edge of view.edges) {
    if (!edge.points.length) continue;
    const path = svgEl('path', { class: 'edge', d: pathData(edge.points), 'data-from': edge.from, 'data-to': edge.to });
    path.append(svgEl('title', {}, `${edge.tensor}${edge.label ? ` ${edge.label}` : ''}${edge.dtype ? ` ${edge.dtype}` : ''}`));
    yield [LAYER.edges, path, ...bounds(edge.points)];
    const key = `${edge.from}\u0000${edge.tensor}`;
    if (edge.label && !seen.has(key)) {
      seen.add(key);
      const [x, y] = labelPoint(edge.points, horizontal);
      yield [LAYER.labels, svgEl('text', { x, y }, edge.label), x, y - 9, x + edge.label.length * 5.4, y];
    }
  }
  for (const item of view.nodes) yield [LAYER.nodes, drawNode(item), item.x, item.y, item.x + item.w, item.y + item.h];
}

/** How many elements drawingElements(view) makes. */
export function countElements(view) {
  let n = view.frames.length + view.nodes.length;
  const seen = new Set();
  for (const edge of view.edges) {
    if (!edge.points.length) continue;
    n += 1;
    const key = `${edge.from}\u0000${edge.tensor}`;
    if (edge.label && !seen.has(key)) {
      seen.add(key);
      n += 1;
    }
  }
  return n;
}

/** Build the SVG content for `view` into `root` (a <g>); returns lookups for the caller:
 *  byId (node id -> its <g>), heads (frame id -> its header <g>), the tiles and the layers. */
export function drawGraph(root, view) {
  const tiles = new Map();
  const layers = drawingLayers();
  const tiled = layers.map((layer) => new TiledLayer(layer, tiles));
  const heads = new Map();
  const byId = new Map();
  for (const [layer, element, x0, y0, x1, y1] of drawingElements(view)) {
    tiled[layer].add(element, x0, y0, x1, y1);
    if (layer === LAYER.nodes) byId.set(element.dataset.id, element);
    else if (layer === LAYER.frames) heads.set(element.dataset.id, element.querySelector('.frame-head'));
  }
  root.replaceChildren(...layers);
  return { byId, heads, tiles, layers };
}

/**
 * A cheap stand-in for far zoom levels: one path per op category holding every box, one
 * for every edge and one for the group frames, so a 10,000-node graph zooms as a dozen
 * elements instead of a hundred thousand.
 */
export function drawOverview(view) {
  const g = svgEl('g', { class: 'overview' });
  const r = (b) => `M${b.x},${b.y}h${b.w}v${b.h}h${-b.w}z`;
  g.append(svgEl('path', {
    d: view.frames.map(r).join(''), fill: FRAME_FILL, stroke: FRAME_STROKE, 'stroke-width': 1,
  }));
  const edges = view.edges.filter((e) => e.points.length).map((e) => polyline(e.points));
  g.append(svgEl('path', { d: edges.join(''), fill: 'none', stroke: EDGE_COLOR, 'stroke-width': 1.2 }));
  const byCategory = new Map();
  for (const item of view.nodes) {
    if (!byCategory.has(item.category)) byCategory.set(item.category, []);
    byCategory.get(item.category).push(r(item));
  }
  for (const [category, parts] of byCategory) {
    const [fill, stroke] = colorsOf(category);
    g.append(svgEl('path', { d: parts.join(''), fill, stroke, 'stroke-width': 1 }));
  }
  return g;
}

/**
 * Keep in the document only the tiles that intersect `rect` = [x0, y0, x1, y1] (graph
 * coordinates). Hidden tiles are detached, not display:none: Chromium still walks hidden
 * SVG subtrees when the zoom (the scale of the parent transform) changes.
 */
export function cullTiles(tiles, rect) {
  for (const [key, tile] of tiles) {
    const b = tile.box;
    const show = key === 'big' || (b[0] <= rect[2] && b[2] >= rect[0] && b[1] <= rect[3] && b[3] >= rect[1]);
    if (tile.shown === show) continue;
    tile.shown = show;
    tile.groups.forEach((g, i) => {
      if (show) tile.layers[i].append(g);
      else g.remove();
    });
  }
}

/** The <defs> the drawing needs (arrowheads), added once to the <svg>. */
export function graphDefs() {
  const defs = svgEl('defs');
  const marker = svgEl('marker', {
    id: 'graph-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
    orient: 'auto-start-reverse',
  });
  marker.append(svgEl('path', { d: 'M0,0L10,5L0,10z', fill: EDGE_COLOR }));
  defs.append(marker);
  return defs;
}

export { svgEl };
