// The scalars dashboard: lazily drawn plotly charts, all selected runs in each: one per tag,
// one per add_scalars call (a line per key), custom layouts (multiline and margin charts,
// logged or made here from tag regexes) and pinned copies of any, all kept in the URL.
// This module decides which charts there are and draws them; scalars/ holds the rest: the
// series store (store.js), the zoom controller (zoom.js), the sidebar (settings.js), the
// cards' DOM (cards.js), pure chart building (chart.js, groups.js, layouts.js), ranks (ranks.js).
/* global Plotly */
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON } from '../shared/api.js';
import { CardGrid } from '../shared/cards.js';
import { createFilterInput } from '../shared/filterinput.js';
import { colorOf } from '../shared/colors.js';
import { el, setChildren, fmtInt } from '../shared/dom.js';
import { PLOT_CONFIG, plotlyReady, onThemeChange, onXZoom } from '../shared/plot.js';
import { PatternMatcher } from '../shared/patternmatch.js';
import { buildChart, xAxisOf } from './scalars/chart.js';
import { grouping, groupRequest, buildGroupChart } from './scalars/groups.js';
import {
  chartSpecs, linesOf, sectionLabel, exportLayout, exportedSpecs, parseMade, parseSubsets, withSubset,
} from './scalars/layouts.js';
import { SeriesStore } from './scalars/store.js';
import { smoothingQuery } from './scalars/smoothmodes.js';
import { TagOrder, nanMarksOf } from './scalars/firstscreen.js';
import { ZoomController, windowKey } from './scalars/zoom.js';
import { buildSettings, chartOptions, xMode } from './scalars/settings.js';
import { RankCharts } from './scalars/ranks.js';
import {
  createCard, showPinned, fillRunsMenu, annotateCard, groupNote, newChartForm, exportLayoutButton,
} from './scalars/cards.js';

state.declare('tags', '');
state.declare('pin', []); // keys of pinned charts
state.declare('chart', []); // charts made here: each a JSON list of tag regexes
state.declare('cruns', []); // per-chart run subsets: each a JSON [key, run, ...]

const RESET_HINT = '(double-click to reset)';

class ScalarsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.drawn = new Map(); // key -> what its chart was last drawn from (see draw)
    this.ranks = new RankCharts(ctx, { spec: (key) => this.specs.get(key), runs: (key) => this.#chartRuns(key), has: (run, tag) => this.#has(run, tag), points: () => this.#points(), store: () => this.store, // data-parallel runs (ranks.js)
      loading: (key) => this.#markLoading(key), draw: (key) => !this.destroyed && this.draw(key), ensure: (key) => this.ensure(key), redraw: () => !this.destroyed && this.redrawVisible() });
    this.store = new SeriesStore({ info: () => ctx.info(), points: () => this.#points(), smoothing: smoothingQuery, rankOf: (run) => this.ranks.rankOf(run) });
    this.order = new TagOrder(() => !this.destroyed && this.#layoutCards());
    this.zoom = new ZoomController({
      onChange: (key) => this.ensure(key),
      onClear: (key) => this.store.dropWindow(key),
    });
    // layout and URL regexes: matched in a worker with a time limit; redraw when known
    this.matcher = new PatternMatcher(() => !this.destroyed && this.redrawVisible());
    this.unsubscribe = [onThemeChange(() => this.redrawVisible()), ctx.runs.onTable(() => this.redrawVisible())];
    buildSettings(ctx.settings, () => this.redrawVisible());
    this.#buildMain();
    this.update({ data: true, runs: true });
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
    const exporter = exportLayoutButton(() => exportLayout(exportedSpecs(this.specs)));
    this.exportDialog = exporter.dialog;
    const form = newChartForm((patterns) => {
      const text = JSON.stringify(patterns);
      const made = state.get('chart');
      if (!made.includes(text)) state.set({ chart: [...made, text] });
      this.#layoutCards();
    });
    setChildren(
      this.ctx.main,
      el(
        'div',
        { class: 'view-toolbar' },
        this.tagFilter.element,
        this.count,
        el('div', { class: 'scalar-tools' }, form, exporter.button),
      ),
      this.ranks.element,
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

  #createCard(key) {
    this.drawn.delete(key); // a new card (e.g. after the filter hid it) must be drawn again
    const spec = this.specs.get(key);
    const pinned = spec.pinned !== undefined || state.get('pin').includes(key);
    return this.ranks.decorate(createCard(spec, pinned, {
      pin: () => this.#togglePin(spec.pinned ?? key),
      remove: () => this.#removeMade(spec),
      runsMenu: (menu) => fillRunsMenu(menu, this.ctx.runs.active(), parseSubsets(state.get('cruns')).get(key),
        (runs) => this.#setSubset(key, runs)),
    }), spec, key);
  }

  #togglePin(key) {
    const pins = state.get('pin');
    state.set({ pin: pins.includes(key) ? pins.filter((k) => k !== key) : [...pins, key] });
    const inner = this.grid.card(key);
    if (inner) showPinned(inner, state.get('pin').includes(key));
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
  /** The runs `key`'s chart shows: the active runs, or the chosen subset of them. */
  #chartRuns(key) {
    const active = this.ctx.runs.active();
    const subset = parseSubsets(state.get('cruns')).get(key);
    return subset ? active.filter((r) => subset.includes(r)) : active;
  }

  #setSubset(key, runs) {
    state.set({ cruns: withSubset(state.get('cruns'), key, runs) });
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

  #layoutCards() {
    if (!this.order.settled) return; // laid out once the first screen's order is known
    const { specs, total, shown } = chartSpecs({
      tags: this.#tags(),
      layouts: this.layouts,
      made: parseMade(state.get('chart')),
      pinned: state.get('pin'),
      filter: this.tagFilter.filter(),
      order: this.order,
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
    const version = this.store.version();
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
    return linesOf(spec, this.#chartRuns(key), (run, tag) => this.#has(run, tag), (run) => byRun[run] || [],
      (pattern, tags) => this.matcher.match(pattern, tags));
  }

  #points() {
    const card = this.grid.card(this.grid.visibleKeys()[0]);
    const width = card ? card.querySelector('.plot').clientWidth : 600;
    return Math.min(4000, Math.max(200, Math.ceil(width / 100) * 100));
  }

  #markLoading(key) {
    const card = this.grid.card(key);
    if (card && card.dataset.state === 'idle') card.dataset.state = 'loading';
  }

  /** Make sure `key`'s card has current data for every (run, tag) it draws, then draw it. */
  ensure(key) {
    if (!this.grid.isVisible(key)) return;
    const version = this.store.version();
    this.zoom.dropStale(key, () => this.#axisRev(key));
    if (this.#grouped(key)) {
      this.#ensureGroups(key, version);
      return;
    }
    if (this.ranks.overlaid(key)) return this.ranks.ensure(key, version); // every rank
    const { lines, bands, pending } = this.#linesOf(key);
    if (pending) { // the matcher's answer calls back (redrawVisible)
      this.#markLoading(key);
      return;
    }
    const pairs = lines.map((l) => [l.run, l.tag]);
    for (const b of bands) pairs.push([b.run, b.tags.lower], [b.run, b.tags.upper]);
    const arriving = this.store.load(pairs, version);
    const drawNow = () => {
      const win = this.zoom.get(key);
      if (win) this.store.loadWindow(key, win, pairs, version, smoothingQuery(), (k) => this.draw(k));
      this.draw(key);
    };
    if (!arriving) {
      drawNow();
      return;
    }
    // held, but smoothed with other settings: drawn now, smoothed here, until the server's
    if (this.store.holds(pairs)) drawNow();
    else this.#markLoading(key);
    arriving.then(() => {
      if (!this.destroyed) drawNow();
    });
  }

  /** The x axis `key`'s chart has now (what a zoom window is relative to). */
  #axisRev(key) {
    if (this.#grouped(key)) return 'step'; // grouped charts are drawn over steps
    const mode = xMode();
    if (mode !== 'relative') return mode;
    const lines = this.#linesOf(key).lines
      .map((l) => this.store.get(l.run, l.tag))
      .filter((e) => e && e.series)
      .map((e) => ({ series: e.series }));
    return xAxisOf(lines, mode).revision;
  }

  // ---- groups: one line and band per group, computed by the server ------------------------
  #grouped(key) {
    const spec = this.specs.get(key);
    return Boolean(spec && spec.kind === 'tag' && grouping());
  }

  #ensureGroups(key, version) {
    const tag = this.specs.get(key).tags[0];
    const runs = this.#chartRuns(key).filter((r) => this.#has(r, tag));
    const body = groupRequest(tag, runs, grouping(), {
      smoothing: state.get('smoothing'),
      points: this.#points(),
      window: this.zoom.stepWindow(key),
    });
    const held = this.store.heldGroups(key, body, version);
    if (held) {
      if (held.groups || held.error) this.draw(key);
      return;
    }
    this.#markLoading(key);
    this.store.loadGroups(key, body, version, (k) => this.draw(k));
  }

  // ---- drawing ---------------------------------------------------------------------------
  /** Draw `key`'s chart from the store if anything it depends on changed since the last draw. */
  draw(key) {
    const card = this.grid.card(key);
    if (!card || !this.grid.isVisible(key)) return;
    const spec = this.specs.get(key);
    const opts = chartOptions();
    if (this.#grouped(key)) {
      this.#drawGroups(key, card, opts);
      return;
    }
    // A zoomed chart draws its window's series where it has them (the full ones meanwhile).
    const overlaid = this.ranks.overlaid(key);
    const windowed = overlaid ? null : this.store.windowOf(key, this.zoom.get(key));
    const entry = (run, tag) => this.store.entry(windowed, run, tag);
    const found = this.#linesOf(key);
    if (found.pending) return;
    const lines = this.ranks.lines(found.lines, overlaid, entry, colorOf);
    const bands = found.bands
      .map((b) => ({ ...b, lower: entry(b.run, b.tags.lower), upper: entry(b.run, b.tags.upper) }))
      .filter((b) => b.lower && b.lower.series && b.upper && b.upper.series)
      .map((b) => ({ ...b, color: colorOf(b.run), name: `${b.run}/${spec.margin[0]}`, versions: [b.lower.version, b.upper.version], lower: b.lower.series, upper: b.upper.series }));
    opts.nanMarks = nanMarksOf(this.ctx.runs.table(), this.#chartRuns(key));
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    opts.marks = this.ranks.marks(card, key, lines, opts.xMode); // elastic restarts
    const drawKey = JSON.stringify([opts, dark, lines.map((r) => [r.run, r.tag, r.rank, r.version]), bands.map((b) => [b.run, b.versions]), found.error, windowed ? [windowed.wanted, windowed.version] : null, overlaid]);
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
    opts.legend = spec.kind !== 'tag' || overlaid;
    opts.bands = bands;
    const { traces, layout, nonFinite, unit, xRevision } = buildChart(lines, opts);
    this.zoom.drawnOn(key, xRevision, unit);
    Plotly.react(plot, traces, layout, PLOT_CONFIG);
    onXZoom(plot, (range) => this.zoom.zoomTo(key, range));
    annotateCard(card, spec, lines, bands, nonFinite, found.error);
    this.ranks.note(card, lines, overlaid); // the rank drawn
    const shownWin = windowed ? windowed.window : null;
    card.dataset.window = windowKey(shownWin);
    if (shownWin) {
      const note = card.querySelector('.card-note');
      note.textContent += ` · ${this.zoom.note(key, shownWin)} ${RESET_HINT}`;
    }
  }

  #drawGroups(key, card, opts) {
    const data = this.store.groupsOf(key);
    if (!data || (!data.groups && !data.error)) return;
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const drawKey = JSON.stringify(['groups', data.request, data.version, dark, opts.logY, opts.tipOrder, Boolean(data.error)]);
    if (this.drawn.get(key) === drawKey) return;
    this.drawn.set(key, drawKey);
    const plot = card.querySelector('.plot');
    if (!plotlyReady()) return;
    const groups = (data.groups || []).map((g) => ({ ...g, color: colorOf(g.name) }));
    const body = JSON.parse(data.request);
    this.zoom.drawnOn(key, 'step', null);
    const { traces, layout } = buildGroupChart(groups, {
      stat: body.stat, band: body.band, logY: opts.logY, tipOrder: opts.tipOrder,
      uirevision: `groups|${opts.logY}`,
    });
    Plotly.react(plot, traces, layout, PLOT_CONFIG);
    onXZoom(plot, (range) => this.zoom.zoomTo(key, range));
    let note = groupNote(groups, body, data.error);
    const win = this.zoom.stepWindow(key);
    if (win) note += ` · ${this.zoom.note(key, win)} ${RESET_HINT}`;
    card.querySelector('.card-note').textContent = note;
    card.dataset.state = data.error ? 'error' : groups.length ? 'ready' : 'empty';
    card.dataset.traces = String(traces.length);
    card.dataset.groups = String(groups.length);
    card.dataset.window = windowKey(win);
  }

  redrawVisible() {
    // ensure: draws from what is held, and refetches what a setting changed (grouped
    // charts are smoothed and grouped on the server)
    for (const key of this.grid.visibleKeys()) this.ensure(key);
  }

  // ---- view protocol ---------------------------------------------------------------------
  update(change) {
    if (change.data) this.#loadLayouts();
    if (change.data || change.runs) {
      this.ranks.update(this.store.version());
      this.order.load(this.store.version()); // (lays the cards out again if it changed)
      this.#layoutCards();
    }
    for (const key of this.grid.visibleKeys()) this.ensure(key);
  }

  destroy() {
    this.destroyed = true; // fetches still in flight draw nothing
    this.store.destroy();
    this.matcher.destroy();
    this.order.destroy();
    this.unsubscribe.forEach((fn) => fn());
    for (const card of this.grid.cards.values()) {
      const plot = card.querySelector('.plot');
      if (plot.data) Plotly.purge(plot);
    }
    if (this.exportDialog) this.exportDialog.remove();
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
