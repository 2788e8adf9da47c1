// "Save as HTML": downloads the report of what is on screen (GET api/export/html with the
// page's URL state plus the runs the run list shows), one self-contained file that opens
// with no server. An error (a filter matching nothing) is said in the status line.

/** The report's URL for the current view: the URL state, and the active runs by name. */
export function reportURL(activeRuns) {
  const params = new URLSearchParams(window.location.search);
  params.delete('runs');
  activeRuns.forEach((run) => params.append('runs', run));
  return `api/export/html?${params.toString()}`;
}

/** Wire `button` to download the report of `runList.active()`; `status` shows errors. */
export function installSaveHtml(button, runList, status) {
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const response = await fetch(reportURL(runList.active()));
      if (!response.ok) {
        let message = response.statusText;
        try {
          message = (await response.json()).error || message;
        } catch (_) { /* not JSON */ }
        throw new Error(message);
      }
      const url = URL.createObjectURL(await response.blob());
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
