// A plotly chart inside a card: an accessible container, drawing with the shared config, and
// cleanup. Views call draw() again on data, setting and theme changes (Plotly.react diffs).
//
// Draws are serialized, across charts too: Plotly.react is asynchronous, and starting a
// WebGL chart (parcoords, splom) while another is still being built leaves one of them broken
// ("WebGL is not supported"). A draw asked for meanwhile replaces any other waiting one.
/* global Plotly */
import { el } from './dom.js';
import { PLOT_CONFIG, plotlyReady } from './plot.js';

let queue = Promise.resolve(); // the last draw started, page-wide

/** createPlot(label, {className}) -> {element, draw(traces, layout, config), purge()} */
export function createPlot(label, { className = 'plot' } = {}) {
  const element = el('div', { class: className, role: 'img', 'aria-label': label });
  let running = null; // promise of the draw in progress
  let waiting = null; // {args, promise, resolve, reject} of the newest draw asked meanwhile

  function run(args) {
    if (!plotlyReady()) return Promise.reject(new Error('plotly.js failed to load.'));
    const [traces, layout, config] = args;
    const done = queue.then(() => Plotly.react(element, traces, layout, { ...PLOT_CONFIG, ...config }));
    queue = done.catch(() => {}); // one failed chart must not block the others
    return done;
  }

  function pump(args) {
    running = run(args).finally(() => {
      running = null;
      if (waiting) {
        const next = waiting;
        waiting = null;
        pump(next.args).then(next.resolve, next.reject);
      }
    });
    return running;
  }

  return {
    element,
    draw(traces, layout, config = {}) {
      const args = [traces, layout, config];
      if (!running) return pump(args);
      if (waiting) {
        waiting.args = args;
        return waiting.promise;
      }
      let resolve;
      let reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      waiting = { args, promise, resolve, reject };
      return promise;
    },
    purge() {
      waiting = null;
      if (plotlyReady() && element.data) Plotly.purge(element);
    },
  };
}
