// The hyper-parameters dashboard: a table of runs (hparams and the last value of each metric;
// sortable, filterable, CSV download), a parallel-coordinates chart and a scatter matrix.
// Choosing a run (its row button, or a point of the scatter matrix) shows its metric curves.
/* global Plotly */
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, postJSON, toNumbers } from '../shared/api.js';
import { createFilterInput } from '../shared/filterinput.js';
import { createPlot } from '../shared/plotcard.js';
import { baseLayout, axis, plotlyText, onThemeChange, plotlyReady } from '../shared/plot.js';
import { colorOf } from '../shared/colors.js';
import { fmtValue, showName } from '../shared/format.js';
import { el, setChildren, fmtInt } from '../shared/dom.js';
import { columnsOf, tableOfHParams, indexTable, cellValue, sortRuns } from '../shared/runtable.js';
import { toCSV, dimensionsOf, parcoordsFigure, splomFigure, domainText } from './hparams_data.js';

state.declare('hpSort', 'run');
state.declare('hpDesc', false);
state.declare('hpFilter', '');
state.declare('hpRun', '');

// The sort key in the URL (hpSort) and a header's data-key: the run table's column id, with
// links' older "h:" for an hparam ("h:lr" is the column "hp:lr").
const urlKey = (id) => (id.startsWith('hp:') ? `h:${id.slice(3)}` : id);

class HParamsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.answer = null; // the last /api/hparams answer
    this.table = null; // ... as a run table (shared/runtable.js)
    this.version = null;
    this.csvURL = null;
    this.#build();
    this.stopTheme = onThemeChange(() => this.render());
    this.update({ data: true });
  }

  #build() {
    this.filter = createFilterInput({
      label: 'Filter rows (regex over every cell)',
      value: state.get('hpFilter'),
      name: 'hparams-filter',
      onChange: (text) => {
        state.set({ hpFilter: text });
        this.render();
      },
    });
    this.count = el('span', { class: 'count', 'aria-live': 'polite' });
    this.csv = el('a', { class: 'btn', download: 'hparams.csv', 'aria-label': 'Download the table as CSV' }, 'Download CSV');
    this.tableEl = el('table', { class: 'hp-table' });
    this.parcoords = createPlot('Parallel coordinates of hyper-parameters and metrics, one line per run', { className: 'plot hp-parcoords' });
    this.splom = createPlot('Scatter matrix of hyper-parameters and metrics, one point per run', { className: 'plot hp-splom' });
    this.metrics = el('section', { class: 'hp-metrics', 'aria-label': 'Metric curves of the chosen run' });
    const section = (title, ...body) => el('section', { class: 'hp-section' }, el('h2', { class: 'hp-title' }, title), ...body);
    setChildren(
      this.ctx.main,
      el('div', { class: 'hparams', dataset: { kind: 'hparams' } },
        el('div', { class: 'view-toolbar' }, this.filter.element, this.count, this.csv),
        el('div', { class: 'hp-table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Runs table' }, this.tableEl),
        this.metrics,
        section('Parallel coordinates', el('p', { class: 'muted small' }, 'Drag along an axis to filter lines; drag an axis title to reorder.'), this.parcoords.element),
        section('Scatter matrix', el('p', { class: 'muted small' }, 'Click a point to show that run\u2019s metric curves.'), this.splom.element)),
    );
    setChildren(this.ctx.settings, el('h2', {}, 'Hyper-parameters'), el('p', { class: 'muted small' }, 'Runs listed below filter every part of this page.'));
  }

  /** The value of `column` for `run`. */
  #value(run, column) {
    return cellValue(this.table, this.index, run, column.id);
  }

  /** Selected runs that match the row filter, sorted as asked. */
  #runs(columns) {
    const active = new Set(this.ctx.runs.active());
    const filter = this.filter.filter();
    const runs = this.table.runs.filter((run) => active.has(run) && filter.test(columns.map((c) => fmtValue(this.#value(run, c))).join(' ')));
    const column = columns.find((c) => urlKey(c.id) === state.get('hpSort')) || columns[0];
    return sortRuns(runs, `${state.get('hpDesc') ? '-' : ''}${column.id}`, this.table, this.index);
  }

  render() {
    if (!this.table) return;
    const columns = columnsOf(this.table);
    const runs = this.#runs(columns);
    this.count.textContent = `${fmtInt(runs.length)} of ${fmtInt(this.table.runs.length)} runs`;
    this.#renderTable(columns, runs);
    this.#renderCSV(columns, runs);
    this.#renderCharts(columns, runs);
    const chosen = state.get('hpRun');
    if (chosen && !runs.includes(chosen)) this.#showMetrics('');
  }

  #renderTable(columns, runs) {
    const sortKey = state.get('hpSort');
    const desc = state.get('hpDesc');
    const head = el('tr', {}, ...columns.map((c) => {
      const key = urlKey(c.id);
      const sorted = key === sortKey;
      const button = el('button', { type: 'button', class: 'hp-sort' }, c.label, sorted ? (desc ? ' ▼' : ' ▲') : '');
      button.addEventListener('click', () => {
        state.set({ hpSort: key, hpDesc: sorted ? !desc : false });
        this.render();
        this.tableEl.querySelector(`th[data-key="${CSS.escape(key)}"] button`)?.focus();
      });
      // the values the experiment declares (TensorBoard's hparams_config), under the name
      const domain = c.kind === 'hparam' ? domainText((this.answer.domains || {})[c.label]) : '';
      const note = domain ? el('div', { class: 'hp-domain muted small', title: 'Values the experiment declares' }, domain) : null;
      return el('th', { scope: 'col', class: `hp-col-${c.kind}`, 'aria-sort': sorted ? (desc ? 'descending' : 'ascending') : 'none', dataset: { key } }, button, note);
    }));
    const chosen = state.get('hpRun');
    const body = runs.map((run) => el('tr', { dataset: { run }, class: run === chosen ? 'chosen' : '' },
      ...columns.map((c) => (c.kind === 'run' ? this.#runCell(run) : el('td', { class: `hp-col-${c.kind}` }, fmtValue(this.#value(run, c)))))));
    setChildren(this.tableEl, el('thead', {}, head), el('tbody', {}, ...body));
  }

  #runCell(run) {
    const button = el('button', { type: 'button', class: 'hp-run', title: `Show the metric curves of ${run}` },
      el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }), showName(run));
    button.addEventListener('click', () => this.#showMetrics(state.get('hpRun') === run ? '' : run));
    return el('th', { scope: 'row', class: 'hp-run-cell' }, button);
  }

  #renderCSV(columns, runs) {
    if (this.csvURL) URL.revokeObjectURL(this.csvURL);
    this.csvURL = URL.createObjectURL(new Blob([toCSV(columns, runs, (run, c) => this.#value(run, c))], { type: 'text/csv' }));
    this.csv.href = this.csvURL;
  }

  #renderCharts(columns, runs) {
    const dims = dimensionsOf(columns, runs, (run, c) => this.#value(run, c));
    const colors = runs.map((run) => colorOf(run));
    const enough = runs.length > 0 && dims.length > 0;
    this.parcoords.element.hidden = !enough;
    this.splom.element.hidden = !enough || dims.length < 2;
    if (!enough) return;
    const layout = baseLayout({ margin: { l: 60, r: 60, t: 48, b: 24 } });
    this.parcoords.draw([parcoordsFigure(dims, runs, colors, plotlyText)], layout);
    if (dims.length >= 2) {
      const splom = splomFigure(dims, runs, colors, plotlyText);
      const n = splom.dimensions.length;
      const grid = {};
      for (let i = 1; i <= n; i += 1) {
        grid[`xaxis${i === 1 ? '' : i}`] = axis({ showline: true });
        grid[`yaxis${i === 1 ? '' : i}`] = axis({ showline: true });
      }
      this.splom.draw([splom], baseLayout({ ...grid, hovermode: 'closest', dragmode: 'select', margin: { l: 60, r: 12, t: 12, b: 48 } })).then(() => this.#hookSplom());
    }
  }

  #hookSplom() {
    const div = this.splom.element;
    if (div.dataset.hooked) return;
    div.dataset.hooked = '1';
    div.on('plotly_click', (event) => {
      const point = event && event.points && event.points[0];
      const runs = div.data[0].meta.runs;
      if (point && runs[point.pointIndex] !== undefined) this.#showMetrics(runs[point.pointIndex]);
    });
  }

  /** Show (or with '' hide) the scalar curves of the chosen run's metric tags. */
  async #showMetrics(run) {
    state.set({ hpRun: run });
    for (const tr of this.tableEl.querySelectorAll('tbody tr')) tr.classList.toggle('chosen', tr.dataset.run === run);
    this.metrics.querySelectorAll('.plot').forEach((p) => createPlotPurge(p));
    if (!run || !this.answer) {
      setChildren(this.metrics);
      return;
    }
    const row = this.answer.runs.find((r) => r.run === run);
    const tags = row ? row.metric_tags : [];
    const close = el('button', { type: 'button', class: 'btn' }, 'Close');
    close.addEventListener('click', () => this.#showMetrics(''));
    const grid = el('div', { class: 'cards' });
    setChildren(this.metrics, el('div', { class: 'hp-metrics-head' },
      el('h2', { class: 'hp-title' }, 'Metrics of ', el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }), ` ${run}`), close), grid);
    if (!tags.length) {
      grid.append(el('p', { class: 'muted' }, 'This run names no metric tags.'));
      return;
    }
    const body = await postJSON('api/scalars/batch', { series: tags.map((tag) => ({ run, tag })), points: 500 });
    if (state.get('hpRun') !== run) return;
    body.series.forEach((series, i) => grid.append(this.#metricCard(run, tags[i], series)));
    this.metrics.dataset.run = run;
  }

  #metricCard(run, tag, series) {
    const card = el('article', { class: 'card', dataset: { tag } }, el('header', { class: 'card-head' }, el('h3', { class: 'card-title' }, showName(tag))));
    if (series.error) {
      card.append(el('p', { class: 'card-note' }, `No scalar data: ${series.error}`));
      return card;
    }
    const plot = createPlot(`${tag} of run ${run} over steps`);
    card.append(plot.element);
    requestAnimationFrame(() => plot.draw([{
      type: 'scatter', mode: 'lines', x: series.steps, y: Array.from(toNumbers(series.values), (v) => (Number.isFinite(v) ? v : null)),
      line: { color: colorOf(run), width: 1.6 }, hovertemplate: 'step %{x}: %{y:.6g}<extra></extra>',
    }], baseLayout({ xaxis: axis({ title: { text: 'step' } }), yaxis: axis({}), hovermode: 'closest' })));
    return card;
  }

  async update(change) {
    const info = this.ctx.info();
    const version = info ? info.data_version : 0;
    if (change.data && version !== this.version) {
      this.version = version;
      try {
        this.answer = await getJSON('api/hparams');
        this.table = tableOfHParams(this.answer);
        this.index = indexTable(this.table);
      } catch (err) {
        setChildren(this.tableEl, el('caption', { role: 'alert' }, `Could not load hyper-parameters: ${err.message}`));
        return;
      }
      this.render();
      if (state.get('hpRun')) this.#showMetrics(state.get('hpRun'));
      return;
    }
    this.render();
  }

  destroy() {
    this.stopTheme();
    if (this.csvURL) URL.revokeObjectURL(this.csvURL);
    this.parcoords.purge();
    this.splom.purge();
    this.metrics.querySelectorAll('.plot').forEach((p) => createPlotPurge(p));
  }
}

function createPlotPurge(div) {
  if (plotlyReady() && div.data) Plotly.purge(div);
}

registerView(classView({
  id: 'hparams',
  label: 'HParams',
  kind: 'hparams',
  order: 70,
  View: HParamsView,
}));
