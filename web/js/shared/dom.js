// Tiny DOM helpers. Text always goes in through textContent (never innerHTML), so run and tag
// names like "<script>" are shown, not parsed.

/**
 * Create an element: el('button', {class: 'x', type: 'button', onclick: fn}, 'text', child)
 * Attributes starting with "on" become listeners; `dataset` and `style` take objects;
 * boolean true sets an empty attribute, false/null/undefined skips it.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      node.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(node.dataset, value);
    } else if (key === 'style' && typeof value === 'object') {
      Object.assign(node.style, value);
    } else if (key === 'class') {
      node.className = value;
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace all children of `node`. */
export function setChildren(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/** Call `fn` once `ms` after the last call. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** Add the stylesheet `href` to the page once (a view's own CSS, loaded with its first mount). */
export function ensureStylesheet(id, href) {
  if (document.getElementById(id)) return;
  document.head.append(el('link', { id, rel: 'stylesheet', href }));
}

let idCounter = 0;
/** A unique element id for label/aria wiring. */
export function uid(prefix = 'vdl') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** Format an integer with thousands separators (as toLocaleString('en-US') does). A whole
 *  number is grouped here: the page's first toLocaleString loads locale data (tens of ms). */
export function fmtInt(n) {
  const x = Number(n);
  if (!Number.isSafeInteger(x) || Object.is(x, -0)) return x.toLocaleString('en-US');
  const digits = String(Math.abs(x)).replace(/\B(?=(\d{3})+$)/g, ',');
  return x < 0 ? `-${digits}` : digits;
}
