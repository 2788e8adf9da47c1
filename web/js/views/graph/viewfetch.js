// Asking the server for a view of a model (/api/graph/view). A big one is laid out by a job
// on the server: until it is done the answer is `pending` with its progress, and the view is
// asked for again until it is ready. Apart from graph.js, which keeps what is shown.
import { postJSON } from '../../shared/api.js';
import { fmtInt } from '../../shared/dom.js';

const POLL_MS = 200; // how often a pending layout's progress is asked for

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
  for (;;) {
    const data = await postJSON('api/graph/view', { ...body, background: true });
    if (stale()) return null;
    if (!data.pending) return data;
    onProgress(data.progress);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (stale()) return null;
  }
}
