// The worker of shared/patternmatch.js: tests one pattern against many texts, off the page's
// thread, so that a pattern that backtracks for ever stalls only this worker (which the page
// then ends) and never the page. It says when it starts, so that the page's time limit
// counts the matching, not the worker's start-up.
self.onmessage = (event) => {
  const { id, pattern, flags, texts } = event.data;
  self.postMessage({ id, started: true });
  let re;
  try {
    re = new RegExp(pattern, flags);
  } catch (err) {
    self.postMessage({ id, error: err.message });
    return;
  }
  self.postMessage({ id, hits: texts.map((t) => re.test(t)) });
};
