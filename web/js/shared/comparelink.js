// Asking for a comparison of runs from anywhere (the run list's "Compare selected" button, a
// chart): an event the comparison view (views/compare.js) answers, so that shared modules do
// not import a view.
export const MAX_COMPARE = 100; // the server's limit (api/compare)
export const COMPARE_EVENT = 'vdl:compare';

/** Open the comparison of `runs` (the first MAX_COMPARE); false when fewer than two. */
export function requestComparison(runs) {
  const chosen = [...new Set(runs)].slice(0, MAX_COMPARE);
  if (chosen.length < 2) return false;
  window.dispatchEvent(new CustomEvent(COMPARE_EVENT, { detail: { runs: chosen } }));
  return true;
}
