// Keyboard use of the WebGL drawing, which has no element per node: a cursor moves between
// nodes in reading order (Tab, Shift+Tab) or along edges (Alt+Down, Alt+Up), Enter or space
// activates it; other keys pan and zoom. `c` is the GLCanvas. The SVG drawing (canvas.js)
// uses the same order, edges and labels (readingCompare, neighbours, nodeLabel).

/** What a node is called to a screen reader and in its tooltip. */
export function nodeLabel(item) {
  return item.type === 'group'
    ? `Group ${item.title}, ${item.ops} ops, collapsed`
    : `${item.title}${item.subtitle ? ` ${item.subtitle}` : ''}`;
}

/** A node's tooltip (on hover, in both drawings): an op's full name (its label when it has
 *  none), a group's path. */
export function nodeTooltip(item) {
  if (item.type === 'group') return item.path || item.title;
  return item.name || nodeLabel(item);
}

/** The reading-order comparison of two boxes ({x, y}): rows, then columns; columns first
 *  for LR (`lr`). Shared with the SVG drawing (canvas.js). */
export function readingCompare(lr) {
  return lr ? (p, q) => p.x - q.x || p.y - q.y : (p, q) => p.y - q.y || p.x - q.x;
}

/** Node indices in reading order (rows, then columns; columns first for LR). */
export function readingOrder(c) {
  if (!c.order) {
    const nodes = c.data.nodes;
    const compare = readingCompare(c.data.direction === 'LR');
    c.order = Array.from(nodes.keys()).sort((a, b) => compare(nodes[a], nodes[b]));
    c.rank = new Int32Array(nodes.length);
    c.order.forEach((i, r) => { c.rank[i] = r; });
  }
  return c.order;
}

/** The ids of the nodes an edge leads to from node `id` (`forward`) or comes from; `c` is a
 *  drawing with `data` (its adjacency is kept on it as `c.adjacency`, cleared on a draw). */
export function neighbours(c, id, forward) {
  if (!c.adjacency) {
    const out = new Map();
    const inn = new Map();
    for (const e of c.data.edges) {
      if (!out.has(e.from)) out.set(e.from, []);
      if (!inn.has(e.to)) inn.set(e.to, []);
      out.get(e.from).push(e.to);
      inn.get(e.to).push(e.from);
    }
    c.adjacency = { out, inn };
  }
  return (forward ? c.adjacency.out : c.adjacency.inn).get(id) || [];
}

/** The drawing's keydown handler. */
export function keyDown(c, e) {
  if (!c.data) return;
  if ((e.key === 'Enter' || e.key === ' ') && c.cursor) {
    e.preventDefault();
    c.onActivate({ type: 'node', id: c.cursor });
    return;
  }
  if (e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) {
    const order = readingOrder(c);
    const at = c.cursor && c.index.has(c.cursor) ? c.rank[c.index.get(c.cursor)] : -1;
    const next = at + (e.shiftKey ? -1 : 1);
    if (next < 0 || next >= order.length) return; // let the focus leave the drawing
    e.preventDefault();
    c.moveCursor(c.data.nodes[order[next]].id);
    return;
  }
  if (e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp') && c.cursor) {
    e.preventDefault();
    const forward = e.key === 'ArrowDown';
    const next = neighbours(c, c.cursor, forward)[0];
    if (next) c.moveCursor(next, forward ? 'Next along an edge: ' : 'Previous along an edge: ');
    return;
  }
  c.panZoomKey(e);
}
