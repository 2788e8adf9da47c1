// The scalars dashboard: one lazily drawn plotly chart per tag, all selected runs in it.
/* global Plotly */
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { postJSON, apiURL, toNumbers } from '../shared/api.js';
import { createBatcher } from '../shared/batcher.js';
import { CardGrid } from '../shared/cards.js';
import { createFilterInput } from '../shared/filterinput.js';
import { colorOf } from '../shared/colors.js';
import { showName } from '../shared/format.js';
import { el, setChildren, uid, fmtInt } from '../shared/dom.js';
import { stateCheckbox, stateRadios, stateSelect, validChoice } from '../shared/controls.js';
import { PLOT_CONFIG, plotlyReady, onThemeChange } from '../shared/plot.js';
import { buildChart } from './scalars_chart.js';

state.declare('tags', '');
state.declare('smoothing', 0.6);
state.declare('x', 'step');
state.declare('logy', false);
state.declare('outliers', false);
state.declare('tips', 'trace');

const X_MODES = [
  ['step', 'Step'],
  ['relative', 'Relative'],
  ['wall', 'Wall'],
];

// The tooltip's order: plotly's layout.hoversort values (TensorBoard offers the same choice).
const TIP_ORDERS = [
  ['trace', 'Run order'],
  ['value descending', 'Highest value first'],
  ['value ascending', 'Lowest value first'],
];


class ScalarsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.cache = new Map(); // run\0tag -> {version, series} | {version, error}
    this.inflight = new Map(); // run\0tag -> version being fetched
    this.drawn = new Map(); // tag -> key of what is drawn
    this.fetchSeries = createBatcher((items) => this.#fetchMany(items));
    this.unsubscribe = [onThemeChange(() => this.redrawVisible())];
    this.#buildSettings();
    this.#buildMain();
    this.update({ data: true, runs: true });
  }

  // ---- settings (sidebar) ------------------------------------------------------------------
  #buildSettings() {
    const smoothingId = uid('smoothing');
    const slider = el('input', {
      id: smoothingId,
      type: 'range',
      min: '0',
      max: '0.999',
      step: '0.001',
      name: 'smoothing',
    });
    const number = el('input', {
      type: 'number',
      min: '0',
      max: '0.999',
      step: '0.001',
      'aria-label': 'Smoothing value',
      class: 'smoothing-number',
    });
    slider.value = number.value = String(state.get('smoothing'));
    const setSmoothing = (raw) => {
      const v = Math.min(0.999, Math.max(0, Number(raw) || 0));
      slider.value = String(v);
      if (document.activeElement !== number) number.value = String(v);
      state.set({ smoothing: v });
      this.redrawVisible();
    };
    slider.addEventListener('input', () => setSmoothing(slider.value));
    number.addEventListener('change', () => setSmoothing(number.value));

    const redraw = () => this.redrawVisible();
    setChildren(
      this.ctx.settings,
      el('h2', {}, 'Scalars'),
      el(
        'div',
        { class: 'field' },
        el('label', { for: smoothingId }, 'Smoothing'),
        el('div', { class: 'slider-row' }, slider, number),
      ),
      stateRadios('x', 'Horizontal axis', X_MODES, redraw, { name: 'x-axis', inline: true }),
      stateCheckbox('logy', 'Log-scale y-axis', redraw),
      stateCheckbox('outliers', 'Ignore outliers in chart scaling', redraw),
      stateSelect('tips', 'Tooltip order', TIP_ORDERS, redraw, { name: 'tooltip-order' }),
    );
  }

  // ---- main area ---------------------------------------------------------------------------
  #buildMain() {
    this.count = el('span', { class: 'count', 'aria-live': 'polite' });
    this.tagFilter = createFilterInput({
      label: 'Filter tags (regex)',
      placeholder: 'e.g. loss|acc',
      value: state.get('tags'),
      name: 'tag-filter',
      onChange: (text) => {
        state.set({ tags: text });
        this.#layoutCards();
      },
    });
    this.empty = el('p', { class: 'empty', hidden: true });
    const gridEl = el('div', { class: 'groups' });
    setChildren(
      this.ctx.main,
      el('div', { class: 'view-toolbar' }, this.tagFilter.element, this.count),
      this.empty,
      gridEl,
    );
    this.grid = new CardGrid(gridEl, {
      createCard: (tag) => this.#createCard(tag),
      onVisible: (tag) => this.ensure(tag),
    });
  }

  #createCard(tag) {
    this.drawn.delete(tag); // a new card (e.g. after the filter hid it) must be drawn again
    const csv = el('a', { class: 'btn', download: '', 'data-format': 'csv' }, 'CSV');
    const json = el('a', { class: 'btn', download: '', 'data-format': 'json' }, 'JSON');
    csv.setAttribute('aria-label', `Download CSV of ${tag}`);
    json.setAttribute('aria-label', `Download JSON of ${tag}`);
    const expand = el('button', { type: 'button', class: 'btn', 'aria-pressed': 'false' }, 'Expand');
    expand.setAttribute('aria-label', `Expand chart ${tag}`);
    const plot = el('div', { class: 'plot', role: 'img' });
    plot.setAttribute('aria-label', `Chart of ${tag}`);
    const card = el(
      'article',
      { class: 'card', dataset: { tag, state: 'idle' } },
      el(
        'header',
        { class: 'card-head' },
        el('h3', { class: 'card-title', title: showName(tag) }, showName(tag)),
        el('div', { class: 'card-actions' }, csv, json, expand),
      ),
      plot,
      el('p', { class: 'card-note' }),
    );
    expand.addEventListener('click', () => {
      const wide = card.classList.toggle('wide');
      expand.setAttribute('aria-pressed', String(wide));
      expand.textContent = wide ? 'Shrink' : 'Expand';
      if (plot.data) Plotly.Plots.resize(plot);
    });
    return card;
  }

  /** Tags to show: every scalar tag of an active run, filtered. */
  #tags() {
    const byRun = this.ctx.tagsOf('scalar');
    const tags = new Set();
    for (const run of this.ctx.runs.active()) for (const t of byRun[run] || []) tags.add(t);
    return [...tags].sort();
  }

  #layoutCards() {
    const all = this.#tags();
    const filter = this.tagFilter.filter();
    const shown = all.filter((t) => filter.test(t));
    this.count.textContent = `${fmtInt(shown.length)} of ${fmtInt(all.length)} tags`;
    this.empty.hidden = shown.length > 0;
    this.empty.textContent = all.length
      ? 'No tags match the filter.'
      : 'No scalar data for the selected runs.';
    this.grid.setKeys(shown);
    for (const tag of this.grid.visibleKeys()) this.ensure(tag);
  }

  // ---- data ------------------------------------------------------------------------------
  #version() {
    const info = this.ctx.info();
    return info ? info.data_version : 0;
  }

  #runsOf(tag) {
    const byRun = this.ctx.tagsOf('scalar');
    if (this.tagSetsFor !== byRun) {
      // Sets per run, rebuilt only when the tag index object changes (500 tags x many runs).
      this.tagSetsFor = byRun;
      this.tagSets = new Map(Object.entries(byRun).map(([run, tags]) => [run, new Set(tags)]));
    }
    return this.ctx.runs.active().filter((run) => this.tagSets.get(run)?.has(tag));
  }

  #points() {
    const card = this.grid.card(this.grid.visibleKeys()[0]);
    const width = card ? card.querySelector('.plot').clientWidth : 600;
    return Math.min(4000, Math.max(200, Math.ceil(width / 100) * 100));
  }

  async #fetchMany(items) {
    const body = await postJSON('/api/scalars/batch', { series: items, points: this.#points() });
    return body.series;
  }

  /** Make sure `tag`'s card has current data for its runs, then draw it. */
  ensure(tag) {
    if (!this.grid.isVisible(tag)) return;
    const version = this.#version();
    const missing = this.#runsOf(tag).filter((run) => {
      const key = `${run}\u0000${tag}`;
      const have = this.cache.get(key);
      return (!have || have.version !== version) && this.inflight.get(key) !== version;
    });
    if (!missing.length) {
      this.draw(tag);
      return;
    }
    const card = this.grid.card(tag);
    if (card && card.dataset.state === 'idle') card.dataset.state = 'loading';
    const requests = missing.map((run) => {
      const key = `${run}\u0000${tag}`;
      this.inflight.set(key, version);
      return this.fetchSeries({ run, tag }).then(
        (result) => this.#store(key, version, result),
        (err) => this.#store(key, version, { error: err.message }),
      );
    });
    Promise.all(requests).then(() => {
      if (!this.destroyed) this.draw(tag);
    });
  }

  #store(key, version, result) {
    this.inflight.delete(key);
    if (result.error) {
      // Keep showing what we had (a failed refresh must not blank a chart).
      const old = this.cache.get(key);
      this.cache.set(key, { version, error: result.error, series: old && old.series });
      return;
    }
    const wall = toNumbers(result.wall_times);
    const series = {
      steps: result.steps,
      wall,
      values: toNumbers(result.values),
      total: result.total,
      downsampled: result.downsampled,
      start: wall.reduce((m, t) => (Number.isFinite(t) && t < m ? t : m), Infinity),
    };
    this.cache.set(key, { version, series });
  }

  // ---- drawing ---------------------------------------------------------------------------
  #options() {
    return {
      smoothing: state.get('smoothing'),
      xMode: validChoice('x', X_MODES),
      logY: state.get('logy'),
      ignoreOutliers: state.get('outliers'),
      tipOrder: validChoice('tips', TIP_ORDERS),
    };
  }

  /** Draw `tag` from the cache if anything it depends on changed since the last draw. */
  draw(tag) {
    const card = this.grid.card(tag);
    if (!card || !this.grid.isVisible(tag)) return;
    const opts = this.#options();
    const runs = this.#runsOf(tag)
      .map((run) => ({ run, entry: this.cache.get(`${run}\u0000${tag}`) }))
      .filter(({ entry }) => entry && entry.series)
      .map(({ run, entry }) => ({ run, color: colorOf(run), series: entry.series, version: entry.version }));
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const key = JSON.stringify([opts, dark, runs.map((r) => [r.run, r.version])]);
    if (this.drawn.get(tag) === key) return;
    this.drawn.set(tag, key);
    const plot = card.querySelector('.plot');
    if (!plotlyReady()) {
      card.dataset.state = 'error';
      card.querySelector('.card-note').textContent = 'plotly.js failed to load.';
      return;
    }
    opts.uirevision = `${opts.xMode}|${opts.logY}|${opts.ignoreOutliers}`;
    const { traces, layout, nonFinite } = buildChart(runs, opts);
    Plotly.react(plot, traces, layout, PLOT_CONFIG);
    this.#annotate(card, tag, runs, nonFinite);
  }

  #annotate(card, tag, runs, nonFinite) {
    const shown = runs.reduce((n, r) => n + r.series.values.length, 0);
    const total = runs.reduce((n, r) => n + r.series.total, 0);
    let note = runs.length
      ? `${runs.length} run${runs.length === 1 ? '' : 's'} · ${fmtInt(shown)} of ${fmtInt(total)} points`
      : 'No selected run has this tag.';
    if (runs.some((r) => r.series.downsampled)) note += ' (min/max per bucket)';
    if (nonFinite.length) {
      note += ` · non-finite values: ${nonFinite.map((n) => `${n.run} (${n.count})`).join(', ')}`;
    }
    card.querySelector('.card-note').textContent = note;
    card.dataset.state = runs.length ? 'ready' : 'empty';
    card.dataset.traces = String(card.querySelector('.plot').data.length);
    const params = { tag, run: runs.map((r) => r.run) };
    for (const link of card.querySelectorAll('a[data-format]')) {
      const format = link.dataset.format;
      link.href = apiURL('/api/scalars/download', { ...params, format });
      link.toggleAttribute('aria-disabled', !runs.length);
    }
  }

  redrawVisible() {
    for (const tag of this.grid.visibleKeys()) this.draw(tag);
  }

  // ---- view protocol ---------------------------------------------------------------------
  update(change) {
    if (change.data || change.runs) this.#layoutCards();
    for (const tag of this.grid.visibleKeys()) this.ensure(tag);
  }

  destroy() {
    this.destroyed = true; // fetches still in flight draw nothing
    this.unsubscribe.forEach((fn) => fn());
    for (const card of this.grid.cards.values()) {
      const plot = card.querySelector('.plot');
      if (plot.data) Plotly.purge(plot);
    }
    this.grid.destroy();
  }
}

registerView(classView({
  id: 'scalars',
  label: 'Scalars',
  kind: 'scalar',
  order: 10,
  View: ScalarsView,
}));
