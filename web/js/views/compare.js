// The comparison of chosen runs (2 to 100, kept in the URL: ?tab=compare&compare=a&compare=b):
// their configs side by side, only the keys that differ unless "differences only" is turned
// off, a summary of each scalar tag per run (last, min, max, the best value and its step, in
// the direction inferred from the tag's name or chosen here), and their curves overlaid.
// The diff and the summaries are computed by the server (/api/compare); this view draws.
// Opened by the run list's "Compare selected" (shared/comparelink.js) or by a shared link.
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { postJSON } from '../shared/api.js';
import { el, setChildren, ensureStylesheet } from '../shared/dom.js';
import { loadPlotly } from '../shared/plot.js';
import { COMPARE_EVENT, MAX_COMPARE } from '../shared/comparelink.js';
import { configTable, summaryTable, drawOverlay } from './compare_parts.js';
import { showRunDetails } from './compare_details.js';

state.declare('compare', []); // the runs compared
state.declare('cmpall', false); // every config key, not only those that differ
state.declare('cmpdir', []); // directions set here: "tag:min" | "tag:max"

const CHART_POINTS = 500;

// The request of a comparison asked for from elsewhere is sent before the view opens, so the
// server works on it while the page swaps views.
let prefetched = null; // {key, promise}

function compareBody(runs, tags) {
  return { runs, all: state.get('cmpall'), directions: directions(), tags };
}

function fetchComparison(body) {
  const early = prefetched;
  prefetched = null; // used once, by the load that follows the request
  if (early && early.key === JSON.stringify(body)) return early.promise;
  return postJSON('api/compare', body);
}

window.addEventListener(COMPARE_EVENT, (event) => {
  const runs = event.detail.runs.slice(0, MAX_COMPARE);
  state.set({ compare: runs, tab: 'compare' });
  const body = compareBody(runs, []);
  const promise = postJSON('api/compare', body);
  promise.catch(() => {}); // the view reports a failure when it takes the answer
  prefetched = { key: JSON.stringify(body), promise };
  window.dispatchEvent(new CustomEvent('vdl:open-view', { detail: { id: 'compare' } }));
});

function directions() {
  const out = {};
  for (const item of state.get('cmpdir')) {
    const at = item.lastIndexOf(':');
    if (at > 0) out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

class CompareView {
  constructor(ctx) {
    this.ctx = ctx;
    this.token = 0;
    this.plots = [];
    ensureStylesheet('compare-css', 'static/css/compare.css');
    this.root = el('section', { class: 'compare', 'aria-label': 'Run comparison' });
    this.details = el('section', { class: 'hp-section cmp-details', 'aria-label': 'Run details', 'aria-live': 'polite' });
    // a run's column header (config or summary table) opens its details
    const pick = (event) => {
      const th = event.target.closest('th.cmp-run');
      if (!th || (event.type === 'keydown' && event.key !== 'Enter')) return;
      showRunDetails(this.details, th.dataset.run);
    };
    this.root.addEventListener('click', pick);
    this.root.addEventListener('keydown', pick);
    setChildren(ctx.main, this.root);
    this.load();
  }

  update(change) {
    if (change.data) this.load();
  }

  destroy() {
    this.token += 1;
    this.purge();
  }

  purge() {
    /* global Plotly */
    if (typeof Plotly !== 'undefined') this.plots.forEach((p) => Plotly.purge(p));
    this.plots = [];
  }

  async load() {
    const runs = state.get('compare').slice(0, MAX_COMPARE);
    const mine = ++this.token;
    if (runs.length < 2) {
      setChildren(this.root, el('p', { class: 'empty' }, 'Select two or more runs in the run list and press “Compare selected”.'));
      return;
    }
    if (runs.join('\n') !== this.compared) {
      this.compared = runs.join('\n');
      this.tags = null; // other runs: the server picks their tags again
    }
    const tags = this.tags ? [...new Set([...this.tags, ...Object.keys(directions())])] : [];
    let body;
    try {
      body = await fetchComparison(compareBody(runs, tags));
    } catch (err) {
      if (mine === this.token) setChildren(this.root, el('p', { class: 'empty', role: 'alert' }, `Comparison failed: ${err.message}`));
      return;
    }
    if (mine !== this.token) return;
    this.tags = body.tags;
    const text = JSON.stringify(body);
    if (text === this.shown) return; // a refresh that changed nothing compared here
    this.shown = text;
    const table = this.render(body);
    await table; // the curves after the whole table: they are below it
    if (mine === this.token) this.drawCharts(body, mine);
  }

  render(body) {
    const old = this.root.querySelector('.cmp-wrap');
    const scroll = old ? [old.scrollTop, old.scrollLeft] : null; // kept across refreshes
    this.purge();
    const all = state.get('cmpall');
    const diffBox = el('input', { type: 'checkbox', name: 'compare-diff-only' });
    diffBox.checked = !all;
    diffBox.addEventListener('change', () => {
      state.set({ cmpall: !diffBox.checked });
      this.load();
    });
    const { same, total, keys } = body.config;
    const differing = total - same;
    const note = all ? `${differing} of ${total} keys differ (marked)` : `${differing} of ${total} keys differ; ${same} the same`;
    const close = el('button', { type: 'button', name: 'compare-close', onclick: () => this.close() }, 'Close');
    const table = keys.length ? configTable(body) : null;
    const config = table ? table.element
      : el('p', { class: 'muted', dataset: { empty: 'config' } }, total ? 'Every config key is the same in these runs.' : 'These runs have no config or hparams.');
    const onDirection = (tag, which) => {
      const rest = state.get('cmpdir').filter((d) => d.slice(0, d.lastIndexOf(':')) !== tag);
      state.set({ cmpdir: which ? [...rest, `${tag}:${which}`] : rest });
      this.load();
    };
    setChildren(this.root,
      el('div', { class: 'cmp-head' },
        el('h2', {}, `Comparing ${body.runs.length} runs`),
        el('label', { class: 'toggle' }, diffBox, ' Differences only'),
        el('span', { class: 'muted cmp-note' }, note),
        close),
      el('section', { class: 'hp-section', 'aria-label': 'Config' }, el('h3', { class: 'hp-title' }, 'Config'),
        el('p', { class: 'muted' }, 'Choose a run’s name for its whole config.'), config),
      this.details,
      el('section', { class: 'hp-section', 'aria-label': 'Metrics' },
        el('h3', { class: 'hp-title' }, 'Metrics'),
        body.tags.length ? body.tags.map((tag) => summaryTable(body, tag, onDirection))
          : el('p', { class: 'muted' }, 'No scalar tag names a direction; none is summarised.')));
    this.root.dataset.runs = body.runs.join('\n');
    const wrap = this.root.querySelector('.cmp-wrap');
    if (wrap && scroll) [wrap.scrollTop, wrap.scrollLeft] = scroll;
    return table ? table.done : Promise.resolve();
  }

  async drawCharts(body, mine) {
    if (!body.tags.length) return;
    try {
      await loadPlotly();
      const series = body.tags.flatMap((tag) => body.runs.map((run) => ({ run, tag })));
      const answer = await postJSON('api/scalars/batch', { series, points: CHART_POINTS });
      if (mine !== this.token) return;
      for (const tag of body.tags) {
        const div = this.root.querySelector(`.cmp-chart[data-tag="${CSS.escape(tag)}"]`);
        if (!div) continue;
        await drawOverlay(div, tag, answer.series.filter((s) => s.tag === tag));
        div.dataset.state = 'drawn';
        this.plots.push(div);
      }
    } catch (err) {
      if (mine === this.token) this.root.append(el('p', { class: 'empty', role: 'alert' }, `Charts failed: ${err.message}`));
    }
  }

  close() {
    state.set({ compare: [], cmpdir: [] });
    window.dispatchEvent(new CustomEvent('vdl:open-view', { detail: { id: 'scalars' } }));
  }
}

registerView(classView({
  View: CompareView,
  id: 'compare',
  label: 'Compare',
  kind: 'scalar',
  order: 990,
  needsPlotly: false, // the tables first; plotly.js is loaded for the curves after
  shown: () => state.get('compare').length >= 2,
}));
