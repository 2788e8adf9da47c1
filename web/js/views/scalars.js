// The scalars dashboard: lazily drawn plotly charts, all selected runs in each: one per tag,
// one per add_scalars call (a line per key), custom layouts (multiline and margin charts,
// logged or made here from tag regexes) and pinned copies of any, all kept in the URL.
/* global Plotly */
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, postJSON, apiURL, toNumbers } from '../shared/api.js';
import { createBatcher } from '../shared/batcher.js';
import { CardGrid } from '../shared/cards.js';
import { createFilterInput } from '../shared/filterinput.js';
import { colorOf } from '../shared/colors.js';
import { showName, fmtWall } from '../shared/format.js';
import { el, setChildren, uid, fmtInt } from '../shared/dom.js';
import { stateCheckbox, stateRadios, stateSelect, validChoice } from '../shared/controls.js';
import { PLOT_CONFIG, plotlyReady, onThemeChange, onXZoom } from '../shared/plot.js';
import { buildChart, xAxisOf } from './scalars/chart.js';
import {
  GROUP_MODES, GROUP_STATS, GROUP_BANDS, grouping, setGrouping, groupRequest, buildGroupChart,
} from './scalars/groups.js';
import {
  chartSpecs, linesOf, exportLayout, sectionLabel, keyOf, parseKey, compilePatterns,
} from './scalars/layouts.js';

state.declare('tags', '');
state.declare('smoothing', 0.6);
state.declare('x', 'step');
state.declare('logy', false);
state.declare('outliers', false);
state.declare('tips', 'trace');
state.declare('pin', []); // keys of pinned charts
state.declare('chart', []); // charts made here: each a JSON list of tag regexes
state.declare('cruns', []); // per-chart run subsets: each a JSON [key, run, ...]

const MAX_BATCH = 2000; // series per /api/scalars/batch request (the server's limit)
const MIN_LINE_POINTS = 100; // however many lines share the budget
const LINE_BUDGET = 300000; // points of a full view's batch, shared by its lines (see linePoints)
const WAIT_SECONDS = 5; // how long a batch of partial series may be held by the server (its first load)

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


/**
 * Points per line of a full view: the chart's width-based resolution, shared out so that
 * a batch holds at most LINE_BUDGET points. 2,000 lines of 150 min/max points each draw
 * the same picture as 500 each (no one tells 2,000 overlapping lines apart at more), in a
 * quarter of the bytes: 9 MB of JSON instead of 29 MB for a sweep's first chart. A zoom
 * refetches its window at full resolution.
 */
function linePoints(points, lines) {
  return Math.max(MIN_LINE_POINTS, Math.min(points, Math.floor(LINE_BUDGET / Math.max(1, lines))));
}

class ScalarsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.cache = new Map(); // run\0tag -> {version, series} | {version, error}
    this.inflight = new Map(); // run\0tag -> {version, wait, promise} of the fetch under way
    this.drawn = new Map(); // tag -> key of what is drawn
    // Zoomed charts: key -> {rev, start, end}, the visible x window on the axis `rev` (see
    // xAxisOf: 'step' in steps, 'wall' in epoch seconds, 'relative|unit' in seconds since
    // each run's start); the window's series fetched at screen resolution (key -> {window,
    // version, wanted, series: Map(run\0tag -> series)}: the answer drawn, while the next
    // one is in zoomPending); and each chart's x axis as last drawn (key -> {rev, unit}).
    this.zoom = new Map();
    this.zoomData = new Map();
    this.zoomPending = new Map();
    this.zoomTimers = new Map();
    this.axes = new Map();
    this.groupData = new Map(); // key -> {request, version, groups | error}
    this.groupTimers = new Map(); // key -> timer of a grouped refetch waiting for input to rest
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
      this.#groupSettings(),
    );
  }

  /** Group runs: by a regex capture on the name or by hparams; centre line and band. */
  #groupSettings() {
    const g = grouping();
    const modeId = uid('group-mode');
    const mode = el('select', { id: modeId, name: 'group-mode', 'aria-label': 'Group runs by' },
      ...GROUP_MODES.map(([id, label]) => el('option', { value: id }, label)));
    mode.value = g ? g.mode : '';
    const text = el('input', {
      type: 'text',
      name: 'group-by',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-label': 'Group by (regex with capture groups, or hparam names)',
    });
    text.value = g ? g.text : '';
    const error = el('p', { class: 'filter-error', role: 'alert', hidden: true });
    const placeholder = () => {
      text.placeholder = mode.value === 'hp' ? 'e.g. lr, optimizer' : 'e.g. ^(.*)_seed\\d+$';
      text.disabled = !mode.value;
    };
    const apply = () => {
      placeholder();
      if (mode.value === 're' && text.value.trim()) {
        try {
          new RegExp(text.value.trim()); // eslint-disable-line no-new
        } catch (err) {
          error.hidden = false;
          error.textContent = `Invalid regular expression: ${err.message}`;
          return;
        }
      }
      error.hidden = true;
      setGrouping(mode.value, text.value);
      this.redrawVisible();
    };
    placeholder();
    mode.addEventListener('change', apply);
    text.addEventListener('change', apply);
    const redraw = () => this.redrawVisible();
    return el(
      'fieldset',
      { class: 'field group-settings' },
      el('legend', {}, 'Group runs'),
      mode,
      text,
      error,
      stateSelect('gstat', 'Group line', GROUP_STATS, redraw, { name: 'group-stat' }),
      stateSelect('gband', 'Group band', GROUP_BANDS, redraw, { name: 'group-band' }),
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
      el(
        'div',
        { class: 'view-toolbar' },
        this.tagFilter.element,
        this.count,
        el('div', { class: 'scalar-tools' }, this.#newChartForm(), this.#exportButton()),
      ),
      this.empty,
      gridEl,
    );
    this.grid = new CardGrid(gridEl, {
      createCard: (key) => this.#createCard(key),
      onVisible: (key) => this.ensure(key),
      group: (key) => (this.specs.get(key) || {}).group || '',
      label: sectionLabel,
    });
  }

  /** "New chart": a chart of every tag matching any of a few regexes, kept in the URL. */
  #newChartForm() {
    const id = uid('new-chart');
    const input = el('input', {
      id,
      type: 'text',
      name: 'new-chart',
      placeholder: 'e.g. ^loss/ , acc$',
      autocomplete: 'off',
      spellcheck: 'false',
    });
    const error = el('span', { class: 'new-chart-error', role: 'alert', hidden: true });
    const form = el(
      'form',
      { class: 'new-chart' },
      el('label', { for: id }, 'New chart from tag regexes (comma-separated)'),
      el('div', { class: 'slider-row' }, input, el('button', { type: 'submit', class: 'btn' }, 'Add chart')),
      error,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const patterns = input.value.split(',').map((p) => p.trim()).filter(Boolean);
      const compiled = compilePatterns(patterns);
      error.hidden = !compiled.error && patterns.length > 0;
      error.textContent = compiled.error || (patterns.length ? '' : 'Type at least one regex.');
      if (compiled.error || !patterns.length) return;
      const text = JSON.stringify(patterns);
      const made = state.get('chart');
      if (!made.includes(text)) state.set({ chart: [...made, text] });
      input.value = '';
      this.#layoutCards();
    });
    return form;
  }

  /** "Export layout": the charts above the automatic groups as a layout dictionary. */
  #exportButton() {
    const text = el('textarea', { class: 'export-text', readonly: true, rows: '12', spellcheck: 'false', 'aria-label': 'Layout dictionary' });
    const copy = el('button', { type: 'button', class: 'btn' }, 'Copy');
    const close = el('button', { type: 'button', class: 'btn' }, 'Close');
    const status = el('span', { class: 'count', 'aria-live': 'polite' });
    this.exportDialog = el(
      'dialog',
      { class: 'lightbox export-dialog', 'aria-label': 'Export layout' },
      el('h3', {}, 'Layout for add_custom_scalars'),
      text,
      el('div', { class: 'card-actions' }, copy, close, status),
    );
    close.addEventListener('click', () => this.exportDialog.close());
    copy.addEventListener('click', async () => {
      text.select();
      try {
        await navigator.clipboard.writeText(text.value);
        status.textContent = 'Copied.';
      } catch (_) {
        status.textContent = 'Press Ctrl+C to copy the selected text.';
      }
    });
    const open = el('button', { type: 'button', class: 'btn', name: 'export-layout' }, 'Export layout');
    open.addEventListener('click', () => {
      // Custom layouts, charts made here, and pinned charts that are in neither.
      const custom = (s) => s.kind === 'multiline' || s.kind === 'margin';
      const specs = [...this.specs.values()];
      const exported = (s) => {
        if (s.pinned === undefined) return custom(s);
        const original = this.specs.get(s.pinned);
        return !(original && custom(original));
      };
      text.value = exportLayout(specs.filter(exported));
      status.textContent = '';
      if (!this.exportDialog.isConnected) document.body.append(this.exportDialog);
      this.exportDialog.showModal();
      text.select();
    });
    return open;
  }

  #createCard(key) {
    this.drawn.delete(key); // a new card (e.g. after the filter hid it) must be drawn again
    const spec = this.specs.get(key);
    const title = spec.title;
    const csv = el('a', { class: 'btn', download: '', 'data-format': 'csv' }, 'CSV');
    const json = el('a', { class: 'btn', download: '', 'data-format': 'json' }, 'JSON');
    csv.setAttribute('aria-label', `Download CSV of ${title}`);
    json.setAttribute('aria-label', `Download JSON of ${title}`);
    const pinned = spec.pinned !== undefined || state.get('pin').includes(key);
    const pin = el('button', { type: 'button', class: 'btn', name: 'pin', 'aria-pressed': String(pinned) }, pinned ? 'Unpin' : 'Pin');
    pin.setAttribute('aria-label', `${pinned ? 'Unpin' : 'Pin'} chart ${title}`);
    pin.addEventListener('click', () => this.#togglePin(spec.pinned ?? key));
    const expand = el('button', { type: 'button', class: 'btn', 'aria-pressed': 'false' }, 'Expand');
    expand.setAttribute('aria-label', `Expand chart ${title}`);
    const runsMenu = el('details', { class: 'card-runs' }, el('summary', { class: 'btn' }, 'Runs'), el('div', { class: 'card-runs-list' }));
    runsMenu.addEventListener('toggle', () => {
      if (runsMenu.open) this.#fillRunsMenu(key, runsMenu);
    });
    const actions = [csv, json, runsMenu, pin, expand];
    if (spec.removable) {
      const remove = el('button', { type: 'button', class: 'btn', name: 'remove' }, 'Remove');
      remove.setAttribute('aria-label', `Remove chart ${title}`);
      remove.addEventListener('click', () => this.#removeMade(spec));
      actions.push(remove);
    }
    const plot = el('div', { class: 'plot', role: 'img' });
    plot.setAttribute('aria-label', `Chart of ${title}`);
    const dataset = { state: 'idle', chart: title, kind: spec.kind };
    if (spec.kind === 'tag') dataset.tag = spec.tags[0];
    if (spec.pinned !== undefined) dataset.pinned = '1';
    const card = el(
      'article',
      { class: `card${spec.kind === 'tag' ? '' : ' combined'}`, dataset },
      el(
        'header',
        { class: 'card-head' },
        el('h3', { class: 'card-title', title: showName(title) }, showName(title)),
        el('div', { class: 'card-actions' }, ...actions),
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

  #togglePin(key) {
    const pins = state.get('pin');
    state.set({ pin: pins.includes(key) ? pins.filter((k) => k !== key) : [...pins, key] });
    const inner = this.grid.card(key);
    if (inner) {
      const on = state.get('pin').includes(key);
      const button = inner.querySelector('button[name=pin]');
      button.setAttribute('aria-pressed', String(on));
      button.textContent = on ? 'Unpin' : 'Pin';
      button.setAttribute('aria-label', `${on ? 'Unpin' : 'Pin'} chart ${inner.dataset.chart}`);
    }
    this.#layoutCards();
  }

  #removeMade(spec) {
    const text = JSON.stringify(spec.patterns);
    state.set({
      chart: state.get('chart').filter((c) => c !== text),
      pin: state.get('pin').filter((k) => k !== spec.key),
    });
    this.#layoutCards();
  }

  // ---- per-chart run subsets -------------------------------------------------------------
  #subsets() {
    const out = new Map();
    for (const text of state.get('cruns')) {
      const parts = parseKey(text);
      if (parts && parts.length >= 1) out.set(parts[0], parts.slice(1));
    }
    return out;
  }

  /** The runs `key`'s chart shows: the active runs, or the chosen subset of them. */
  #chartRuns(key) {
    const active = this.ctx.runs.active();
    const subset = this.#subsets().get(key);
    return subset ? active.filter((r) => subset.includes(r)) : active;
  }

  #fillRunsMenu(key, menu) {
    const list = menu.querySelector('.card-runs-list');
    const active = this.ctx.runs.active();
    const subset = this.#subsets().get(key);
    const boxes = active.map((run) => {
      const input = el('input', { type: 'checkbox', value: run });
      input.checked = !subset || subset.includes(run);
      input.addEventListener('change', () => {
        const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
        this.#setSubset(key, chosen.length === active.length ? null : chosen);
      });
      return input;
    });
    const all = el('button', { type: 'button', class: 'btn' }, 'Every run');
    all.addEventListener('click', () => {
      boxes.forEach((b) => {
        b.checked = true;
      });
      this.#setSubset(key, null);
    });
    setChildren(
      list,
      ...boxes.map((b) => el('label', { class: 'block' }, b, ' ', el('span', { class: 'swatch', style: { background: colorOf(b.value) } }), ` ${showName(b.value)}`)),
      all,
    );
  }

  #setSubset(key, runs) {
    const others = state.get('cruns').filter((text) => (parseKey(text) || [])[0] !== key);
    state.set({ cruns: runs ? [...others, keyOf(key, ...runs)] : others });
    this.ensure(key);
  }

  // ---- which charts --------------------------------------------------------------------------
  /** Tags to consider: every scalar tag of an active run. */
  #tags() {
    const byRun = this.ctx.tagsOf('scalar');
    const tags = new Set();
    for (const run of this.ctx.runs.active()) for (const t of byRun[run] || []) tags.add(t);
    return [...tags].sort();
  }

  #madeCharts() {
    const out = [];
    for (const text of state.get('chart')) {
      const parts = parseKey(text);
      if (parts && parts.length) out.push(parts);
    }
    return out;
  }

  #layoutCards() {
    const { specs, total, shown } = chartSpecs({
      tags: this.#tags(),
      layouts: this.layouts,
      made: this.#madeCharts(),
      pinned: state.get('pin'),
      filter: this.tagFilter.filter(),
    });
    const old = this.specs || new Map();
    this.specs = new Map(specs.map((s) => [s.key, s]));
    // A chart whose definition changed (a newer layout) gets a new card.
    const changed = [...this.specs.keys()].filter((k) => old.has(k) && JSON.stringify(old.get(k)) !== JSON.stringify(this.specs.get(k)));
    if (changed.length) this.grid.setKeys([...this.specs.keys()].filter((k) => !changed.includes(k)));
    this.count.textContent = `${fmtInt(shown)} of ${fmtInt(total)} tags`;
    this.empty.hidden = specs.length > 0;
    this.empty.textContent = total
      ? 'No tags match the filter.'
      : 'No scalar data for the selected runs.';
    this.grid.setKeys([...this.specs.keys()]);
    for (const key of this.grid.visibleKeys()) this.ensure(key);
  }

  /** /api/scalars/layouts, when any run recorded charts or layouts (old logs: never asked). */
  #loadLayouts() {
    const runs = Object.keys(this.ctx.tagsOf('custom_scalars'));
    const version = this.#version();
    if (!runs.length) {
      this.layouts = null;
      return;
    }
    if (this.layoutsVersion === version) return;
    this.layoutsVersion = version;
    getJSON('api/scalars/layouts').then(
      (body) => {
        if (this.destroyed || this.layoutsVersion !== version) return;
        this.layouts = body;
        this.#layoutCards();
      },
      () => {
        this.layoutsVersion = null; // try again with the next data version
      },
    );
  }

  // ---- data ------------------------------------------------------------------------------
  #version() {
    const info = this.ctx.info();
    return info ? info.data_version : 0;
  }

  /** True during the server's first load of the logdir (it answers the first chart's tag
   * of every run first; an answer without `loading` then needs no refetch until it ends). */
  #firstLoad() {
    const info = this.ctx.info();
    return Boolean(info && !info.loaded);
  }

  /** Whether a cached answer still holds for `version`. */
  #current(have, version) {
    return have.version === version || (have.settled && this.#firstLoad());
  }

  #has(run, tag) {
    const byRun = this.ctx.tagsOf('scalar');
    if (this.tagSetsFor !== byRun) {
      // Sets per run, rebuilt only when the tag index object changes (500 tags x many runs).
      this.tagSetsFor = byRun;
      this.tagSets = new Map(Object.entries(byRun).map(([r, tags]) => [r, new Set(tags)]));
    }
    return Boolean(this.tagSets.get(run)?.has(tag));
  }

  /** The lines and bands `key`'s chart draws for its runs. */
  #linesOf(key) {
    const spec = this.specs.get(key);
    if (!spec) return { lines: [], bands: [] };
    const byRun = this.ctx.tagsOf('scalar');
    return linesOf(spec, this.#chartRuns(key), (run, tag) => this.#has(run, tag), (run) => byRun[run] || []);
  }

  #points() {
    const card = this.grid.card(this.grid.visibleKeys()[0]);
    const width = card ? card.querySelector('.plot').clientWidth : 600;
    return Math.min(4000, Math.max(200, Math.ceil(width / 100) * 100));
  }

  async #fetchMany(items) {
    // The server answers at most MAX_BATCH series a request: the charts on screen of a
    // sweep of 2,000 runs ask for more, so they go in several requests (one after the
    // other: the first chart's series first).
    // While the server's first load runs, a batch asks the server to hold its answer
    // until the series are complete (at most WAIT_SECONDS, then partial: a huge logdir
    // still fills in), rather than one partial answer per poll: a partial answer of
    // 2,000 series costs the load ~0.3 s of CPU.
    const out = [];
    for (let i = 0; i < items.length; i += MAX_BATCH) {
      const slice = items.slice(i, i + MAX_BATCH);
      const points = linePoints(this.#points(), slice.length);
      const wait = slice.some((item) => item.wait) ? WAIT_SECONDS : 0;
      const series = slice.map(({ run, tag }) => ({ run, tag }));
      const body = await postJSON('api/scalars/batch', wait ? { series, points, wait } : { series, points });
      out.push(...body.series);
    }
    return out;
  }

  /** Make sure `key`'s card has current data for every (run, tag) it draws, then draw it. */
  ensure(key) {
    if (!this.grid.isVisible(key)) return;
    const version = this.#version();
    this.#dropStaleZoom(key);
    if (this.#grouped(key)) {
      this.#ensureGroups(key, version);
      return;
    }
    const { lines, bands } = this.#linesOf(key);
    const pairs = lines.map((l) => [l.run, l.tag]);
    for (const b of bands) pairs.push([b.run, b.tags.lower], [b.run, b.tags.upper]);
    // Series another chart is already fetching are waited for, not fetched twice: charts
    // share series (a tag alone, in an add_scalars chart, in a layout, pinned).
    const waits = [];
    for (const [run, tag] of pairs) {
      const id = `${run}\u0000${tag}`;
      const have = this.cache.get(id);
      if (have && this.#current(have, version)) continue;
      const pending = this.inflight.get(id);
      if (pending && (pending.version === version || pending.wait)) {
        waits.push(pending.promise); // (a held request answers with everything loaded)
        continue;
      }
      const wait = this.#firstLoad(); // held until loaded, at most WAIT_SECONDS
      const entry = { version, wait, promise: null };
      entry.promise = this.fetchSeries({ run, tag, wait }).then(
        (result) => this.#store(id, version, result, entry),
        (err) => this.#store(id, version, { error: err.message }, entry),
      );
      this.inflight.set(id, entry);
      waits.push(entry.promise);
    }
    if (!waits.length) {
      if (this.zoom.has(key)) this.#ensureWindow(key, pairs, version);
      this.draw(key);
      return;
    }
    const card = this.grid.card(key);
    if (card && card.dataset.state === 'idle') card.dataset.state = 'loading';
    Promise.all(waits).then(() => {
      if (this.destroyed) return;
      if (this.zoom.has(key)) this.#ensureWindow(key, pairs, version);
      this.draw(key);
    });
  }

  #store(id, version, result, entry) {
    if (this.inflight.get(id) === entry) this.inflight.delete(id);
    if (result.error) {
      // Keep showing what we had (a failed refresh must not blank a chart).
      const old = this.cache.get(id);
      this.cache.set(id, { version, error: result.error, series: old && old.series });
      return;
    }
    this.cache.set(id, {
      version, series: toSeries(result), loading: Boolean(result.loading),
      settled: !result.loading && this.#firstLoad(),
    });
  }

  // ---- zoom: the visible window, fetched at screen resolution ----------------------------
  // On every x axis: a step window as a step range; a wall-time window as one; a relative
  // window as each run's own wall-time range (its start plus the window's seconds). Any
  // single step of any series is reached by zooming: the server answers min/max buckets
  // over the window, and every point once it holds fewer than the chart is wide.

  /** The x axis `key`'s chart has now (what a zoom window is relative to). */
  #axisRev(key) {
    if (this.#grouped(key)) return 'step'; // grouped charts are drawn over steps
    const mode = validChoice('x', X_MODES);
    if (mode !== 'relative') return mode;
    const lines = this.#linesOf(key).lines
      .map((l) => this.cache.get(`${l.run}\u0000${l.tag}`))
      .filter((e) => e && e.series)
      .map((e) => ({ series: e.series }));
    return xAxisOf(lines, mode).revision;
  }

  /** Forget a window made on another axis (the x mode, its unit or grouping changed:
   *  plotly drops the user's range with it, as the axis' uirevision differs). */
  #dropStaleZoom(key) {
    const win = this.zoom.get(key);
    if (win && win.rev !== this.#axisRev(key)) this.#clearZoom(key);
  }

  #clearZoom(key) {
    this.zoom.delete(key);
    this.zoomData.delete(key);
    this.zoomPending.delete(key);
    clearTimeout(this.zoomTimers.get(key));
  }

  #zoomTo(key, range) {
    if (!range) {
      if (!this.zoom.has(key)) return;
      this.#clearZoom(key);
      this.ensure(key);
      return;
    }
    const axis = this.axes.get(key);
    let start = Math.min(range.start, range.end);
    let end = Math.max(range.start, range.end);
    if (!axis || !Number.isFinite(start) || !Number.isFinite(end)) return;
    if (axis.rev === 'step') {
      start = Math.floor(start);
      end = Math.ceil(end);
    } else if (axis.rev === 'wall') {
      start /= 1000; // epoch milliseconds on a date axis
      end /= 1000;
    } else {
      start *= axis.unit.div; // the relative axis' unit, in seconds
      end *= axis.unit.div;
    }
    this.zoom.set(key, { rev: axis.rev, start, end });
    this.ensure(key);
  }

  /** Fetch the zoom window of `key`'s series unless held for this version and window. */
  #ensureWindow(key, pairs, version) {
    const win = this.zoom.get(key);
    const smoothing = state.get('smoothing');
    const wanted = JSON.stringify([win, pairs, smoothing]);
    const shown = this.zoomData.get(key);
    if (shown && shown.version === version && shown.wanted === wanted) {
      if (shown.series) this.draw(key);
      return;
    }
    const pending = this.zoomPending.get(key);
    if (pending && pending.version === version && pending.wanted === wanted) return;
    const entry = { version, wanted, window: win, series: null };
    this.zoomPending.set(key, entry);
    const body = { series: [], points: this.#points() };
    if (smoothing > 0) body.smoothing = smoothing;
    if (win.rev === 'step') Object.assign(body, { start_step: win.start, end_step: win.end });
    else if (win.rev === 'wall') Object.assign(body, { wall_min: win.start, wall_max: win.end });
    for (const [run, tag] of pairs) {
      const item = { run, tag };
      if (win.rev.startsWith('relative')) {
        // each run's relative axis starts at its own first wall time
        const base = this.cache.get(`${run}\u0000${tag}`);
        const origin = base && base.series ? base.series.start : NaN;
        if (!Number.isFinite(origin)) continue;
        Object.assign(item, { wall_min: origin + win.start, wall_max: origin + win.end });
      }
      body.series.push(item);
    }
    const send = () => {
      if (this.destroyed || this.zoomPending.get(key) !== entry) return;
      postJSON('api/scalars/batch', body).then(
        (answer) => {
          if (this.destroyed || this.zoomPending.get(key) !== entry) return;
          this.zoomPending.delete(key);
          entry.series = new Map();
          for (const item of answer.series) {
            if (!item.error) entry.series.set(`${item.run}\u0000${item.tag}`, toSeries(item));
          }
          this.zoomData.set(key, entry);
          this.draw(key);
        },
        () => {
          if (this.zoomPending.get(key) === entry) this.zoomPending.delete(key);
        },
      );
    };
    // Only the smoothing changed (a dragged slider): ask once it rests, and draw the
    // window held meanwhile.
    clearTimeout(this.zoomTimers.get(key));
    const sameWindow = shown && shown.series && shown.version === version &&
      JSON.stringify(shown.window) === JSON.stringify(win);
    if (sameWindow) this.zoomTimers.set(key, setTimeout(send, 150));
    else send();
  }

  /** A note on the window `win` shown, for the card. */
  #windowNote(key, win) {
    if (win.rev === 'step') return `steps ${fmtInt(win.start)}–${fmtInt(win.end)}`;
    if (win.rev === 'wall') return `wall time ${fmtWall(win.start)}–${fmtWall(win.end)}`;
    const unit = this.axes.get(key)?.unit;
    const div = unit ? unit.div : 1;
    const fmt = (t) => Number((t / div).toPrecision(6));
    return `relative ${fmt(win.start)}–${fmt(win.end)} ${unit ? unit.label : 's'}`;
  }

  // ---- groups: one line and band per group, computed by the server ------------------------
  #grouped(key) {
    const spec = this.specs.get(key);
    return Boolean(spec && spec.kind === 'tag' && grouping());
  }

  #groupBody(key) {
    const spec = this.specs.get(key);
    const tag = spec.tags[0];
    const runs = this.#chartRuns(key).filter((r) => this.#has(r, tag));
    return groupRequest(tag, runs, grouping(), {
      smoothing: state.get('smoothing'),
      points: this.#points(),
      window: this.zoom.get(key)?.rev === 'step' ? this.zoom.get(key) : null,
    });
  }

  #ensureGroups(key, version) {
    const body = this.#groupBody(key);
    const request = JSON.stringify(body);
    const have = this.groupData.get(key);
    if (have && have.request === request && this.#current(have, version)) {
      if (have.groups || have.error) this.draw(key);
      return;
    }
    const entry = { version, request, groups: null, error: null };
    this.groupData.set(key, entry);
    const card = this.grid.card(key);
    if (card && card.dataset.state === 'idle') card.dataset.state = 'loading';
    if (!body.runs.length) {
      entry.groups = [];
      this.draw(key);
      return;
    }
    // A dragged smoothing slider changes the request many times a second: ask once it
    // rests (the answer of a superseded request is dropped anyway).
    clearTimeout(this.groupTimers.get(key));
    this.groupTimers.set(key, setTimeout(() => this.#fetchGroups(key, entry, body), have ? 150 : 0));
  }

  #fetchGroups(key, entry, body) {
    if (this.destroyed || this.groupData.get(key) !== entry) return;
    postJSON('api/scalars/groups', body).then(
      (answer) => {
        entry.groups = answer.groups;
        entry.answer = answer;
        entry.settled = !answer.loading && this.#firstLoad();
      },
      (err) => {
        entry.error = err.message;
      },
    ).then(() => {
      if (!this.destroyed && this.groupData.get(key) === entry) this.draw(key);
    });
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

  /** Draw `key`'s chart from the cache if anything it depends on changed since the last draw. */
  draw(key) {
    const card = this.grid.card(key);
    if (!card || !this.grid.isVisible(key)) return;
    const spec = this.specs.get(key);
    const opts = this.#options();
    if (this.#grouped(key)) {
      this.#drawGroups(key, card, opts);
      return;
    }
    // A zoomed chart draws its window's series where it has them (the full ones meanwhile).
    // A window's series keeps its full series' start and span: the relative axis' origin
    // and unit do not move with the window.
    const win = this.zoom.get(key);
    const zoomed = win ? this.zoomData.get(key) : null;
    const windowed = zoomed && zoomed.series && JSON.stringify(zoomed.window) === JSON.stringify(win) ? zoomed : null;
    const entry = (run, tag) => {
      const id = `${run}\u0000${tag}`;
      const base = this.cache.get(id);
      const part = windowed && windowed.series.get(id);
      if (!part || !base || !base.series) return base;
      return { ...base, series: { ...part, start: base.series.start, span: base.series.span } };
    };
    const found = this.#linesOf(key);
    const lines = found.lines
      .map((line) => ({ ...line, entry: entry(line.run, line.tag) }))
      .filter((l) => l.entry && l.entry.series)
      .map(({ entry: e, ...line }) => ({ ...line, color: colorOf(line.run), series: e.series, version: e.version }));
    const bands = found.bands
      .map((b) => ({ ...b, lower: entry(b.run, b.tags.lower), upper: entry(b.run, b.tags.upper) }))
      .filter((b) => b.lower && b.lower.series && b.upper && b.upper.series)
      .map((b) => ({ ...b, color: colorOf(b.run), name: `${b.run}/${spec.margin[0]}`, versions: [b.lower.version, b.upper.version], lower: b.lower.series, upper: b.upper.series }));
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const drawKey = JSON.stringify([opts, dark, lines.map((r) => [r.run, r.tag, r.version]), bands.map((b) => [b.run, b.versions]), found.error, windowed ? [windowed.wanted, windowed.version] : null]);
    if (this.drawn.get(key) === drawKey) return;
    this.drawn.set(key, drawKey);
    const plot = card.querySelector('.plot');
    if (!plotlyReady()) {
      card.dataset.state = 'error';
      card.querySelector('.card-note').textContent = 'plotly.js failed to load.';
      return;
    }
    opts.uirevision = `${opts.xMode}|${opts.logY}|${opts.ignoreOutliers}`;
    // the x axis keeps the user's zoom through a log-y or outlier switch; y rescales
    opts.yRevision = `${opts.logY}|${opts.ignoreOutliers}`;
    opts.legend = spec.kind !== 'tag';
    opts.bands = bands;
    const { traces, layout, nonFinite, unit, xRevision } = buildChart(lines, opts);
    this.axes.set(key, { rev: xRevision, unit });
    Plotly.react(plot, traces, layout, PLOT_CONFIG);
    onXZoom(plot, (range) => this.#zoomTo(key, range));
    this.#annotate(card, spec, lines, bands, nonFinite, found.error);
    const shownWin = windowed ? windowed.window : null;
    card.dataset.window = windowKey(shownWin);
    if (shownWin) {
      const note = card.querySelector('.card-note');
      note.textContent += ` · ${this.#windowNote(key, shownWin)} (double-click to reset)`;
    }
  }

  #drawGroups(key, card, opts) {
    const data = this.groupData.get(key);
    if (!data || (!data.groups && !data.error)) return;
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const drawKey = JSON.stringify(['groups', data.request, data.version, dark, opts.logY, opts.tipOrder, Boolean(data.error)]);
    if (this.drawn.get(key) === drawKey) return;
    this.drawn.set(key, drawKey);
    const plot = card.querySelector('.plot');
    if (!plotlyReady()) return;
    const groups = (data.groups || []).map((g) => ({ ...g, color: colorOf(g.name) }));
    const body = JSON.parse(data.request);
    this.axes.set(key, { rev: 'step', unit: null });
    const { traces, layout } = buildGroupChart(groups, {
      stat: body.stat, band: body.band, logY: opts.logY, tipOrder: opts.tipOrder,
      uirevision: `groups|${opts.logY}`,
    });
    Plotly.react(plot, traces, layout, PLOT_CONFIG);
    onXZoom(plot, (range) => this.#zoomTo(key, range));
    const runs = groups.reduce((n, g) => n + g.members.length, 0);
    let note = data.error || `${groups.length} group${groups.length === 1 ? '' : 's'} of ${fmtInt(runs)} run${runs === 1 ? '' : 's'} · ${body.stat}, ${body.band} band, smoothed before grouping`;
    if (!data.error && groups.some((g) => g.interpolated)) note += ' · runs on other step grids interpolated';
    const win = this.zoom.get(key)?.rev === 'step' ? this.zoom.get(key) : null;
    if (win) note += ` · ${this.#windowNote(key, win)} (double-click to reset)`;
    card.querySelector('.card-note').textContent = note;
    card.dataset.state = data.error ? 'error' : groups.length ? 'ready' : 'empty';
    card.dataset.traces = String(traces.length);
    card.dataset.groups = String(groups.length);
    card.dataset.window = windowKey(win);
  }

  #annotate(card, spec, lines, bands, nonFinite, error) {
    const runs = [...new Set(lines.map((l) => l.run))];
    const shown = lines.reduce((n, r) => n + r.series.values.length, 0);
    const total = lines.reduce((n, r) => n + r.series.total, 0);
    const what = spec.kind === 'tag' ? '' : ` · ${lines.length} line${lines.length === 1 ? '' : 's'}`;
    let note = lines.length
      ? `${runs.length} run${runs.length === 1 ? '' : 's'}${what} · ${fmtInt(shown)} of ${fmtInt(total)} points`
      : `No selected run has ${spec.kind === 'tag' ? 'this tag' : 'a tag of this chart'}.`;
    if (error) note = error;
    if (lines.some((r) => r.series.downsampled)) note += ' (min/max per bucket)';
    if (nonFinite.length) {
      note += ` · non-finite values: ${nonFinite.map((n) => `${n.run} (${n.count})`).join(', ')}`;
    }
    card.querySelector('.card-note').textContent = note;
    card.dataset.state = lines.length || bands.length ? 'ready' : 'empty';
    card.dataset.traces = String(card.querySelector('.plot').data.length);
    const tags = [...new Set([...lines.map((l) => l.tag), ...bands.flatMap((b) => [b.tags.lower, b.tags.upper])])];
    const params = { tag: tags, run: runs.length ? runs : [...new Set(bands.map((b) => b.run))] };
    for (const link of card.querySelectorAll('a[data-format]')) {
      const format = link.dataset.format;
      link.href = apiURL('api/scalars/download', { ...params, format });
      link.toggleAttribute('aria-disabled', !tags.length);
    }
  }

  redrawVisible() {
    // ensure: draws from what is held, and refetches what a setting changed (grouped
    // charts are smoothed and grouped on the server)
    for (const key of this.grid.visibleKeys()) this.ensure(key);
  }

  // ---- view protocol ---------------------------------------------------------------------
  update(change) {
    if (change.data) this.#loadLayouts();
    if (change.data || change.runs) this.#layoutCards();
    for (const key of this.grid.visibleKeys()) this.ensure(key);
  }

  destroy() {
    this.destroyed = true; // fetches still in flight draw nothing
    for (const timer of this.zoomTimers.values()) clearTimeout(timer);
    this.unsubscribe.forEach((fn) => fn());
    for (const card of this.grid.cards.values()) {
      const plot = card.querySelector('.plot');
      if (plot.data) Plotly.purge(plot);
    }
    if (this.exportDialog) this.exportDialog.remove();
    this.grid.destroy();
  }
}

/** A series as the API sends it, with numbers parsed, its first wall time and its span
 *  (to its last point: the relative axis' unit), and the server's smoothing if any. */
function toSeries(result) {
  const wall = toNumbers(result.wall_times);
  const start = wall.reduce((m, t) => (Number.isFinite(t) && t < m ? t : m), Infinity);
  const last = wall.length ? wall[wall.length - 1] : 0;
  const series = {
    steps: result.steps,
    wall,
    values: toNumbers(result.values),
    total: result.total,
    downsampled: result.downsampled,
    start,
    span: Number.isFinite(start) ? last - start : 0,
  };
  if (result.smoothed) Object.assign(series, { smoothed: toNumbers(result.smoothed), smoothing: result.smoothing });
  return series;
}

/** A card's data-window: "start:end" for steps, "rev:start:end" on a time axis. */
function windowKey(win) {
  if (!win) return '';
  return win.rev === 'step' ? `${win.start}:${win.end}` : `${win.rev}:${win.start}:${win.end}`;
}

registerView(classView({
  id: 'scalars',
  label: 'Scalars',
  kind: 'scalar',
  order: 10,
  View: ScalarsView,
}));
