// "Save as HTML": downloads the report of what is on screen (GET api/export/html with the
// page's URL state plus the runs the run list shows), one self-contained file that opens
// with no server. An error (a filter matching nothing) is said in the status line.

import { getBlob } from './api.js';

// Runs named in the query at most this long; past it the URL state (runFilter, off) says
// which runs are shown (a filter by values, runWhere, then counts only up to there).
const MAX_QUERY = 8000;

/** The report's URL for the current view: the URL state, and the active runs by name
 * when some are hidden. */
export function reportURL(activeRuns, allRuns) {
  const params = new URLSearchParams(window.location.search);
  params.delete('runs');
  const base = params.toString();
  if (activeRuns.length < allRuns.length) activeRuns.forEach((run) => params.append('runs', run));
  const query = params.toString().length <= MAX_QUERY ? params.toString() : base;
  return `api/export/html?${query}`;
}

/** Wire `button` to download the report of `runList.active()`; `status` shows errors. */
export function installSaveHtml(button, runList, status) {
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const blob = await getBlob(reportURL(runList.active(), runList.all()));
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = 'visualdl-report.html';
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (err) {
      status.textContent = `Save as HTML failed: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });
}
