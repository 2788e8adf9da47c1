// The one HTTP client of the app. Every server error is {"error": "..."}; it surfaces here as
// an ApiError so views have a single error path.

export class ApiError extends Error {
  constructor(status, message, retryAfter = null) {
    super(message);
    this.status = status;
    // Seconds from a 503's Retry-After (work still running on the server), else null.
    this.retryAfter = retryAfter;
  }
}

// Requests in flight, and since when none has been (whenQuiet).
const traffic = { inFlight: 0, quietSince: performance.now() };

/** `promise` (a request and the reading of its answer), counted while in flight. */
function counted(promise) {
  traffic.inFlight += 1;
  return promise.finally(() => {
    traffic.inFlight -= 1;
    if (!traffic.inFlight) traffic.quietSince = performance.now();
  });
}

/**
 * Resolves once no request of this client has been in flight for `ms` milliseconds: for
 * work that may wait (warming plotly.js blocks the page for a second) and should not land
 * while a view is still waiting for what it draws first.
 */
export function whenQuiet(ms) {
  return new Promise((resolve) => {
    const check = () => {
      const left = traffic.inFlight ? ms : traffic.quietSince + ms - performance.now();
      if (left <= 0) resolve();
      else setTimeout(check, Math.max(left, 50));
    };
    check();
  });
}

async function parse(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) {
    const message = body && typeof body.error === 'string' ? body.error : response.statusText;
    const retry = Number.parseFloat(response.headers.get('Retry-After') || '');
    throw new ApiError(response.status, message || `HTTP ${response.status}`,
      Number.isFinite(retry) ? retry : null);
  }
  return body;
}

/** GET a JSON API path with query parameters (arrays repeat the key). */
export async function getJSON(path, params = {}) {
  return counted(fetch(apiURL(path, params), {
    headers: { Accept: 'application/json' },
    cache: 'no-cache',
  }).then(parse));
}

/**
 * GET a JSON API path, asking again while the server answers 503: work still running there
 * (a trace being parsed, a t-SNE being computed) goes on, and the retry is answered from its
 * cache. Each wait is the answer's Retry-After (else `fallback` seconds), told to `onWait`;
 * when `wanted()` turns false (the view moved on) it stops and resolves to null.
 */
export async function getJSONWhenReady(path, params = {},
  { onWait = null, wanted = () => true, fallback = 2 } = {}) {
  for (;;) {
    try {
      return await getJSON(path, params);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 503) throw err;
      const wait = Math.min(Math.max(err.retryAfter ?? fallback, 1), 30);
      if (onWait) onWait(wait);
      await new Promise((resolve) => { setTimeout(resolve, wait * 1000); });
      if (!wanted()) return null;
    }
  }
}

/** GET a file to download (a URL from apiURL): its Blob; a server error throws as getJSON. */
export async function getBlob(url) {
  return counted(fetch(url, { cache: 'no-cache' }).then(async (response) => {
    if (!response.ok) await parse(response); // throws the ApiError of the {"error"} body
    return response.blob();
  }));
}

/** POST a JSON body and parse the JSON answer. */
export async function postJSON(path, body, params = {}) {
  return counted(fetch(apiURL(path, params), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  }).then(parse));
}

/** POST a FormData body (a file upload) and parse the JSON answer. */
export async function postForm(path, form, params = {}) {
  return counted(fetch(apiURL(path, params), {
    method: 'POST',
    headers: { Accept: 'application/json' },
    body: form,
  }).then(parse));
}

/**
 * Build a URL string relative to the page, such as `api/scalars?run=a`; used for download
 * links too. Relative, so the app works under any path prefix (`visualdl --path-prefix`, a
 * Jupyter server proxy's `/proxy/PORT/`): the page is always served at a path ending in "/".
 * A leading "/" on `path` is dropped rather than escaping the prefix.
 */
export function apiURL(path, params = {}) {
  const relative = path.replace(/^\/+/, '');
  const mark = relative.indexOf('?');
  const base = mark < 0 ? relative : relative.slice(0, mark);
  const query = new URLSearchParams(mark < 0 ? '' : relative.slice(mark + 1));
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) {
      query.delete(key);
      value.forEach((v) => query.append(key, v));
    } else if (value !== undefined && value !== null) query.set(key, value);
  }
  const search = query.toString();
  return search ? `${base}?${search}` : base;
}

/** Numbers from the API: non-finite values arrive as "NaN"/"Infinity"/"-Infinity". */
export function toNumbers(list) {
  const out = new Float64Array(list.length);
  for (let i = 0; i < list.length; i += 1) out[i] = Number(list[i]);
  return out;
}
