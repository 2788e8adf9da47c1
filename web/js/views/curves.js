// PR and ROC curves share everything but their axes: a card per run × tag with a step slider,
// the curve of the chosen step, a hover with the threshold, both rates and the confusion counts,
// and the area under the curve. pr_curves.js and roc_curves.js register one view each.
import { registerView } from '../shared/views.js';
import { getJSON, toNumbers } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { createPlot } from '../shared/plotcard.js';
import { baseLayout, axis, themeColors, onThemeChange } from '../shared/plot.js';
import { colorOf } from '../shared/colors.js';
import { el, setChildren } from '../shared/dom.js';

const KINDS = {
  pr: {
    kind: 'pr_curve', path: 'api/pr_curves', label: 'PR Curves', order: 60, area: 'PR AUC',
    x: 'recall', y: 'precision', xTitle: 'recall', yTitle: 'precision',
  },
  roc: {
    kind: 'roc_curve', path: 'api/roc_curves', label: 'ROC Curves', order: 61, area: 'ROC AUC',
    x: 'fpr', y: 'tpr', xTitle: 'false positive rate', yTitle: 'true positive rate',
  },
};

/** {traces, layout} of one step's curve. */
export function curveFigure(spec, entry, color) {
  const x = Array.from(toNumbers(entry[spec.x]));
  const y = Array.from(toNumbers(entry[spec.y]));
  const cols = ['thresholds', 'tp', 'fp', 'tn', 'fn'].map((k) => toNumbers(entry[k]));
  const custom = x.map((_, i) => cols.map((c) => c[i]));
  const names = spec.x === 'recall' ? ['recall', 'precision'] : ['FPR', 'TPR'];
  const traces = [];
  if (spec.x === 'fpr') {
    traces.push({
      type: 'scatter', mode: 'lines', x: [0, 1], y: [0, 1], hoverinfo: 'skip',
      line: { dash: 'dot', width: 1, color: themeColors().muted }, meta: { role: 'chance' },
    });
  }
  traces.push({
    type: 'scatter', mode: 'lines+markers', x, y, customdata: custom,
    line: { color, width: 2, shape: 'linear' }, marker: { size: 4, color },
    hovertemplate: `threshold %{customdata[0]:.4g}<br>${names[0]} %{x:.4f}<br>${names[1]} %{y:.4f}` +
      '<br>TP %{customdata[1]} · FP %{customdata[2]}<br>TN %{customdata[3]} · FN %{customdata[4]}<extra></extra>',
    meta: { role: 'curve' },
  });
  const layout = baseLayout({
    xaxis: axis({ title: { text: spec.xTitle }, range: [-0.02, 1.02] }),
    yaxis: axis({ title: { text: spec.yTitle }, range: [-0.02, 1.02] }),
    hovermode: 'closest',
  });
  return { traces, layout };
}

class CurvesView {
  constructor(ctx, id, spec) {
    this.ctx = ctx;
    this.spec = spec;
    this.grid = new RunTagGrid(ctx, { id, kind: spec.kind, noun: spec.label, makeCard: (c) => this.#makeCard(c) });
    setChildren(ctx.settings, el('h2', {}, spec.label), this.grid.syncControl());
    this.stopTheme = onThemeChange(() => this.grid.each((c) => c.redraw && c.redraw()));
    this.grid.layout();
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    const spec = this.spec;
    const plot = createPlot(`${spec.label} of ${tag} in run ${run}`);
    const auc = el('p', { class: 'curve-auc', 'aria-live': 'polite' });
    let current = null;
    const show = async (i, data) => {
      const entry = data.entries[i];
      current = entry;
      const { traces, layout } = curveFigure(spec, entry, colorOf(run));
      await plot.draw(traces, layout);
      auc.textContent = `${spec.area} ${Number(entry.auc).toFixed(4)} at step ${entry.step}`;
      card.dataset.auc = String(entry.auc);
    };
    const controller = steppedCard(cardCtx, {
      fetch: async () => {
        const data = await getJSON(spec.path, { run, tag });
        return { ...data, steps: data.entries.map((e) => e.step), wall_times: data.entries.map((e) => e.wall_time) };
      },
      show,
      content: [auc, plot.element],
      destroy: () => plot.purge(),
    });
    controller.redraw = () => {
      if (current) {
        const { traces, layout } = curveFigure(spec, current, colorOf(run));
        plot.draw(traces, layout);
      }
    };
    return controller;
  }
}

/** Register the PR ('pr') or ROC ('roc') view. */
export function registerCurveView(which) {
  const spec = KINDS[which];
  const id = `${which}_curves`;
  class View extends CurvesView {
    constructor(ctx) {
      super(ctx, id, spec);
    }
  }
  registerView(runTagView({ id, label: spec.label, kind: spec.kind, order: spec.order, View }));
}
