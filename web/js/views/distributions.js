// The distributions dashboard: for each run × tag, percentile bands over steps computed by the
// server from the stored buckets: min–max, the ±1.5σ, ±1σ and ±0.5σ equivalents of a normal
// distribution (6.68–93.32, 15.87–84.13, 30.85–69.15 percent), and the median as a line.
import { registerView } from '../shared/views.js';
import { getJSON, toNumbers } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { createPlot } from '../shared/plotcard.js';
import { baseLayout, axis, onThemeChange } from '../shared/plot.js';
import { colorOf } from '../shared/colors.js';
import { withAlpha } from '../shared/tint.js';
import { el, setChildren, fmtInt } from '../shared/dom.js';

// [lower index, upper index] into the 9 percentiles, outermost band first
const BANDS = [[0, 8], [1, 7], [2, 6], [3, 5]];
const MEDIAN = 4;

/** {traces, layout}: a filled band per pair of percentiles and the median line. */
export function distributionFigure(data, color) {
  const x = data.steps;
  const values = data.values.map((v) => Array.from(toNumbers(v)));
  const traces = [];
  BANDS.forEach(([lo, hi], k) => {
    const name = `${data.percentiles[lo]}–${data.percentiles[hi]}%`;
    traces.push({ type: 'scatter', mode: 'lines', x, y: values[lo], line: { width: 0, color }, hoverinfo: 'skip', showlegend: false, meta: { band: name, edge: 'lower' } });
    traces.push({
      type: 'scatter', mode: 'lines', x, y: values[hi], fill: 'tonexty',
      fillcolor: withAlpha(color, 0.14 + 0.06 * k), line: { width: 0, color }, hoverinfo: 'skip', meta: { band: name, edge: 'upper' },
    });
  });
  // the median carries every percentile in its hover, so one tooltip tells the whole story
  const rows = x.map((_, i) => values.map((v) => v[i]));
  const labels = ['max', '93.32%', '84.13%', '69.15%', 'median', '30.85%', '15.87%', '6.68%', 'min'];
  const order = [8, 7, 6, 5, 4, 3, 2, 1, 0];
  const lines = order.map((p, k) => `${labels[k]}: %{customdata[${p}]:.4g}`).join('<br>');
  traces.push({
    type: 'scatter', mode: 'lines', x, y: values[MEDIAN], customdata: rows, line: { color, width: 1.6 },
    hovertemplate: `step %{x}<br>${lines}<extra></extra>`, meta: { band: 'median' },
  });
  const layout = baseLayout({ xaxis: axis({ title: { text: 'step' } }), yaxis: axis({}), hovermode: 'closest' });
  return { traces, layout };
}

class DistributionsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'distributions',
      kind: 'histogram',
      noun: 'histograms',
      makeCard: (c) => this.#makeCard(c),
    });
    setChildren(
      ctx.settings,
      el('h2', {}, 'Distributions'),
      el('p', { class: 'muted small' }, 'Bands: min–max, ±1.5σ, ±1σ and ±0.5σ equivalent percentiles; the line is the median.'),
    );
    this.stopTheme = onThemeChange(() => this.grid.each((c) => c.render()));
    this.grid.layout();
  }

  #makeCard({ run, tag, body, card }) {
    const plot = createPlot(`Distribution of ${tag} over steps in run ${run}`);
    const note = el('p', { class: 'card-note' });
    body.append(plot.element, note);
    let data = null;
    const controller = {
      async refresh() {
        data = await getJSON('api/distributions', { run, tag });
        await controller.render();
      },
      async render() {
        if (!data) return;
        const { traces, layout } = distributionFigure(data, colorOf(run));
        await plot.draw(traces, layout);
        card.dataset.traces = String(traces.length);
        note.textContent = `${fmtInt(data.steps.length)} step${data.steps.length === 1 ? '' : 's'}`;
      },
      destroy: () => plot.purge(),
    };
    return controller;
  }
}

registerView(runTagView({ id: 'distributions', label: 'Distributions', kind: 'histogram', order: 55, View: DistributionsView }));
