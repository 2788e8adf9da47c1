// The histograms dashboard: a card per run × tag showing every step's distribution, either
// offset (a ridgeline over steps, newest in front) or overlaid (one line per step, newer
// darker). Buckets were computed by the writer; the browser only scales them.
import { registerView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { createPlot } from '../shared/plotcard.js';
import { baseLayout, axis, themeColors, onThemeChange } from '../shared/plot.js';
import { colorOf } from '../shared/colors.js';
import { mix } from '../shared/tint.js';
import { el, setChildren, fmtInt } from '../shared/dom.js';
import { stateRadios } from '../shared/controls.js';

state.declare('histMode', 'offset');

const MAX_STEPS = 40; // ridges drawn; more would be an unreadable smear

/** At most `n` entries evenly spread over `entries`, always keeping the newest. */
export function spread(entries, n) {
  if (entries.length <= n) return entries;
  const out = [];
  for (let k = 0; k < n; k += 1) out.push(entries[Math.round((k * (entries.length - 1)) / (n - 1))]);
  return out;
}

/** Bucket centres and densities (count per unit of x), so unequal buckets compare fairly. */
function shape(entry) {
  const x = [];
  const y = [];
  for (let i = 0; i < entry.counts.length; i += 1) {
    const lo = Number(entry.edges[i]);
    const hi = Number(entry.edges[i + 1]);
    x.push((lo + hi) / 2);
    y.push(hi > lo ? Number(entry.counts[i]) / (hi - lo) : Number(entry.counts[i]));
  }
  return { x, y, lo: Number(entry.edges[0]), hi: Number(entry.edges[entry.edges.length - 1]) };
}

function offsetTraces(entries, color, bg) {
  const shapes = entries.map(shape);
  const peak = Math.max(1e-300, ...shapes.flatMap((s) => s.y));
  const steps = entries.map((e) => e.step);
  const gap = steps.length > 1 ? (steps[steps.length - 1] - steps[0]) / (steps.length - 1) : 1;
  const height = (gap || 1) * 2.5; // ridges overlap their neighbours a little, as in TensorBoard
  // oldest first: plotly paints later traces on top, so the newest ridge is in front
  return entries.map((e, k) => {
    const s = shapes[k];
    const t = entries.length > 1 ? 1 - k / (entries.length - 1) : 0;
    const x = [s.lo, ...s.x, s.hi];
    const y = [e.step, ...s.y.map((d) => e.step - (d / peak) * height), e.step];
    const counts = ['', ...e.counts.map((c) => fmtInt(Number(c))), ''];
    return {
      type: 'scatter',
      mode: 'lines',
      x,
      y,
      fill: 'toself',
      fillcolor: mix(color, bg, 0.55 + 0.35 * t),
      line: { color: mix(color, bg, 0.6 * t), width: 1 },
      customdata: counts,
      hovertemplate: `step ${e.step}<br>value %{x:.4g}<br>count %{customdata}<extra></extra>`,
      hoveron: 'points',
      meta: { step: e.step },
    };
  });
}

function overlayTraces(entries, color, bg) {
  return entries.map((e, k) => {
    const t = entries.length > 1 ? 1 - k / (entries.length - 1) : 0;
    const s = shape(e);
    return {
      type: 'scatter',
      mode: 'lines',
      x: s.x,
      y: e.counts.map(Number),
      line: { color: mix(color, bg, 0.8 * t), width: k === entries.length - 1 ? 2 : 1 },
      hovertemplate: `step ${e.step}<br>value %{x:.4g}<br>count %{y}<extra></extra>`,
      meta: { step: e.step },
    };
  });
}

/** {traces, layout} of one card in `mode` ('offset' | 'overlay'). */
export function histogramFigure(entries, mode, color) {
  const bg = themeColors().hoverBg;
  const shown = spread(entries, MAX_STEPS);
  if (mode === 'overlay') {
    return {
      traces: overlayTraces(shown, color, bg),
      layout: baseLayout({ xaxis: axis({ title: { text: 'value' } }), yaxis: axis({ title: { text: 'count' } }), hovermode: 'closest' }),
    };
  }
  return {
    traces: offsetTraces(shown, color, bg),
    layout: baseLayout({
      xaxis: axis({ title: { text: 'value' } }),
      yaxis: axis({ title: { text: 'step' }, autorange: 'reversed' }),
      hovermode: 'closest',
    }),
  };
}

class HistogramsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'histograms',
      kind: 'histogram',
      noun: 'histograms',
      makeCard: (c) => this.#makeCard(c),
    });
    const modes = [['offset', 'Offset (ridgeline)'], ['overlay', 'Overlay']];
    setChildren(ctx.settings, el('h2', {}, 'Histograms'),
      stateRadios('histMode', 'Mode', modes, () => this.redraw(), { name: 'hist-mode' }));
    this.stopTheme = onThemeChange(() => this.redraw());
    this.grid.layout();
  }

  #makeCard({ run, tag, body, card }) {
    const plot = createPlot(`Histograms of ${tag} in run ${run}`);
    const note = el('p', { class: 'card-note' });
    body.append(plot.element, note);
    let data = null;
    const controller = {
      async refresh() {
        data = await getJSON('api/histograms', { run, tag });
        await controller.render();
      },
      async render() {
        if (!data) return;
        const mode = state.get('histMode') === 'overlay' ? 'overlay' : 'offset';
        const { traces, layout } = histogramFigure(data.entries, mode, colorOf(run));
        await plot.draw(traces, layout);
        card.dataset.mode = mode;
        card.dataset.traces = String(traces.length);
        const drawn = traces.length;
        note.textContent = `${fmtInt(data.total)} step${data.total === 1 ? '' : 's'}` +
          (drawn < data.total ? ` (${drawn} evenly spaced shown)` : '');
      },
      destroy: () => plot.purge(),
    };
    return controller;
  }

  redraw() {
    this.grid.each((c) => c.render().catch(() => {}));
  }
}

registerView(runTagView({ id: 'histograms', label: 'Histograms', kind: 'histogram', order: 50, View: HistogramsView }));
