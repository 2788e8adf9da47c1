// The view state lives in the URL's query string, so a copied link reproduces the view.
// Keys are declared with defaults; values equal to their default are left out of the URL.

const defaults = new Map(); // key -> default value (string, number, boolean or array)

/** Declare a key and its default; views declare their own keys when they load. */
export function declare(key, defaultValue) {
  defaults.set(key, defaultValue);
}

function params() {
  return new URLSearchParams(window.location.search);
}

/** Read a key, typed like its default. */
export function get(key) {
  const fallback = defaults.get(key);
  const p = params();
  if (Array.isArray(fallback)) return p.has(key) ? p.getAll(key) : fallback.slice();
  const raw = p.get(key);
  if (raw === null) return fallback;
  if (typeof fallback === 'number') {
    const n = Number(raw);
    return Number.isFinite(n) ? n : fallback;
  }
  if (typeof fallback === 'boolean') return raw === '1' || raw === 'true';
  return raw;
}

/** Set several keys at once; one history entry is replaced (none when nothing changed). */
export function set(changes) {
  const p = params();
  const changed = [];
  for (const [key, value] of Object.entries(changes)) {
    const before = p.getAll(key).join('\u0000');
    p.delete(key);
    const fallback = defaults.get(key);
    if (Array.isArray(value)) value.forEach((v) => p.append(key, v));
    else if (!sameAsDefault(value, fallback)) p.set(key, encode(value));
    if (p.getAll(key).join('\u0000') !== before) changed.push(key);
  }
  if (!changed.length) return;
  const query = p.toString();
  // relative to the page: a path that starts with '//' (a link to `host//`) would read as
  // another host's, and the browser refuses to replace the URL with it
  const path = window.location.pathname.replace(/^\/{2,}/, '/');
  const url = `${query ? `?${query}` : path}${window.location.hash}`;
  window.history.replaceState(null, '', url);
}

function sameAsDefault(value, fallback) {
  return value === fallback || value === undefined || value === null;
}

function encode(value) {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}
