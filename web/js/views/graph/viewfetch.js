// Asking the server for a view of a model (/api/graph/view). A big one is laid out by a job
// on the server: until it is done the answer is `pending` with its progress, and the view is
// asked for again until it is ready. Apart from graph/view.js, which keeps what is shown.
//
// The page that opens on the graph tab asks for its model's first view (and its summary
// after it) as soon as graph.js is loaded (askEarly), before the shell has mounted the view:
// the first fetchView / fetchSummary of that model takes those answers instead of asking
// again.
import * as state from '../../shared/state.js';
import { getJSON, postJSON } from '../../shared/api.js';
import { fmtInt, ensureStylesheet } from '../../shared/dom.js';

/** The view's stylesheet (ensureStylesheet's arguments). */
export const STYLESHEET = { id: 'graph-css', href: 'static/css/graph.css' };

// between a pending answer and the next ask: each ask waits up to JOB_WAIT (0.5 s) on the
// server, so the answer is taken within this of the layout's end
const POLL_MS = 50;

// the drawing options, kept in the URL (set by the toolbar's controls)
state.declare('graph_dir', 'TB');
state.declare('graph_attrs', false);
state.declare('graph_inits', false);

/** The drawing options of /api/graph/view, from the URL. */
export function viewOptions() {
  return { direction: state.get('graph_dir'), attrs: state.get('graph_attrs'), inits: state.get('graph_inits') };
}

const early = new Map(); // request key -> the promise of its answer (askEarly)

const viewKey = (body) => `view ${JSON.stringify(body)}`;

/** Ask now for model `id`'s first view with `options` (viewOptions()), and for its summary
 *  once the view is answered (summarySoon). */
function askFor(id, options) {
  const body = { model: id, expanded: 'initial', ...options };
  const view = postJSON('api/graph/view', { ...body, background: true });
  for (const [key, answer] of [[viewKey(body), view], [`summary ${id}`, summarySoon(id, view)]]) {
    answer.catch(() => {}); // whoever takes it handles a failure
    early.set(key, answer);
  }
}

/**
 * /api/graph/summary of model `id`, asked once `first` (the first view's answer) settles:
 * asked together, the server worked out the summary while it laid out the first view, on
 * the same interpreter, and the view (what the page draws first) waited for both.
 */
export function summarySoon(id, first) {
  const ask = () => getJSON('api/graph/summary', { model: id });
  return first.then(ask, ask);
}

/**
 * For a page that opens on the graph tab: ask for the stylesheet and for the summary and
 * first view of the model it will show (the URL's, at once; else the first of `models`, the
 * promise of /api/graph/models, once that is in) with `options` (viewOptions()).
 */
export function askEarly(models, options) {
  ensureStylesheet(STYLESHEET.id, STYLESHEET.href);
  const named = state.get('graph_model');
  if (named) askFor(named, options);
  models.then((body) => {
    const pick = body.models.find((m) => m.id === named) || body.models[0];
    if (pick && pick.id !== named) askFor(pick.id, options);
  }, () => {});
}

/** Ask for /api/graph/models now (the promise of its answer); the view's first
 *  fetchModels() takes it. */
export function askModels() {
  const answer = getJSON('api/graph/models');
  early.set('models', answer);
  answer.catch(() => early.delete('models')); // then the view asks again
  return answer;
}

/** /api/graph/models. */
export function fetchModels() {
  return take('models') || getJSON('api/graph/models');
}

/** The answer asked for early under `key`, once; null when there is none. */
function take(key) {
  const answer = early.get(key) || null;
  early.delete(key);
  return answer;
}

/** /api/graph/summary of model `id`, asked after `first` settles (summarySoon) unless
 *  askEarly asked for it already. */
export function fetchSummary(id, first) {
  return take(`summary ${id}`) || summarySoon(id, first);
}

/** A pending layout's progress ({phase, done, total}) as a status line. */
export function progressText(p) {
  return p.phase === 'waiting' ? 'Waiting for an earlier layout…'
    : p.phase === 'layout' ? `Laying out ${fmtInt(p.done)} / ${fmtInt(p.total)} groups…` : 'Preparing the drawing…';
}

/**
 * The view for request `body` ({model, expanded, ...options}), asked for until ready;
 * onProgress(progress) for each pending answer; null once stale() says that a newer
 * request took over.
 */
export async function fetchView(body, { stale, onProgress }) {
  let asked = take(viewKey(body));
  for (;;) {
    const data = await (asked || postJSON('api/graph/view', { ...body, background: true }));
    asked = null;
    if (stale()) return null;
    if (!data.pending) return data;
    onProgress(data.progress);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (stale()) return null;
  }
}
