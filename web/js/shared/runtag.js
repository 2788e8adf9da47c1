// A card per (run, tag) for the dashboards whose data does not overlay across runs (images,
// audio, text, histograms, curves, figures, embeddings). It owns the tag filter, the count,
// the lazy CardGrid grouped by tag prefix, the data version each card last loaded, and the
// "sync every slider" option. A view supplies a card controller per (run, tag):
//   makeCard({run, tag, body, grid}) -> {refresh(version), showStep?(step), destroy?()}
// refresh() is called when the card comes on screen and whenever the data version changed
// while it is on screen; the controller fetches what it needs then.
import * as state from './state.js';
import { CardGrid, groupOf } from './cards.js';
import { createFilterInput } from './filterinput.js';
import { colorOf } from './colors.js';
import { showName } from './format.js';
import { el, setChildren, fmtInt, uid } from './dom.js';
import { classView } from './views.js';
import { stateCheckbox } from './controls.js';

state.declare('sync', false);

/** The key of a card; JSON keeps any run/tag text intact. */
const keyOf = (run, tag) => JSON.stringify([run, tag]);
const parseKey = (key) => JSON.parse(key);

export class RunTagGrid {
  /**
   * @param ctx the shell's view context
   * @param {{id: string, kind: string, noun: string, makeCard: Function, wide?: boolean}} opts
   */
  constructor(ctx, { id, kind, noun, makeCard, wide = false }) {
    this.ctx = ctx;
    this.kind = kind;
    this.noun = noun;
    this.makeCard = makeCard;
    this.wide = wide;
    this.filterKey = `${id}Tags`;
    state.declare(this.filterKey, '');
    this.controllers = new Map(); // key -> controller
    this.loaded = new Map(); // key -> data version last refreshed
    this.syncStep = null;
    this.#build();
  }

  #build() {
    this.count = el('span', { class: 'count', 'aria-live': 'polite' });
    this.tagFilter = createFilterInput({
      label: 'Filter tags (regex)',
      value: state.get(this.filterKey),
      name: 'tag-filter',
      onChange: (text) => {
        state.set({ [this.filterKey]: text });
        this.layout();
      },
    });
    this.empty = el('p', { class: 'empty', hidden: true });
    const gridEl = el('div', { class: 'groups' });
    this.root = el(
      'div',
      { class: `runtag ${this.wide ? 'runtag-wide' : ''}`, dataset: { kind: this.kind } },
      el('div', { class: 'view-toolbar' }, this.tagFilter.element, this.count),
      this.empty,
      gridEl,
    );
    setChildren(this.ctx.main, this.root);
    this.grid = new CardGrid(gridEl, {
      createCard: (key) => this.#createCard(key),
      onVisible: (key) => this.#refresh(key),
      group: (key) => groupOf(parseKey(key)[1]),
    });
  }

  /** A checkbox for the settings panel: move one slider, every card follows. */
  syncControl() {
    return stateCheckbox('sync', 'Sync all sliders to one step', () => {
      this.syncStep = null;
    });
  }

  /** Called by a controller when its user moved its slider to `step`. */
  stepMoved(fromKey, step) {
    if (!state.get('sync')) return;
    this.syncStep = step;
    for (const [key, c] of this.controllers) {
      if (key !== fromKey && c.showStep) c.showStep(step);
    }
  }

  /** The step every card should show when syncing, or null. */
  syncedStep() {
    return state.get('sync') ? this.syncStep : null;
  }

  #createCard(key) {
    const [run, tag] = parseKey(key);
    const body = el('div', { class: 'card-body' });
    const title = uid('card');
    const card = el(
      'article',
      { class: `card ${this.wide ? 'wide' : ''}`, 'aria-labelledby': title, dataset: { run, tag, state: 'idle' } },
      el(
        'header',
        { class: 'card-head' },
        el('h3', { class: 'card-title', id: title, title: `${showName(tag)} — ${showName(run)}` }, showName(tag)),
        el(
          'span',
          { class: 'card-run', title: showName(run) },
          el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }),
          el('span', { class: 'run-name' }, showName(run)),
        ),
      ),
      body,
    );
    const controller = this.makeCard({ run, tag, key, card, body, grid: this });
    this.controllers.set(key, controller);
    return card;
  }

  #refresh(key) {
    const controller = this.controllers.get(key);
    const version = this.#version();
    if (!controller || this.loaded.get(key) === version) return;
    this.loaded.set(key, version);
    const card = this.grid.card(key);
    if (card.dataset.state === 'idle' || card.dataset.state === 'error') card.dataset.state = 'loading';
    Promise.resolve(controller.refresh(version)).then(
      () => {
        if (card.dataset.state !== 'loading') return; // the controller set its own state
        card.dataset.state = 'ready';
        const note = card.querySelector('.card-error');
        if (note) note.remove();
      },
      (err) => this.showError(card, err),
    );
  }

  /** Put an error in a card instead of throwing into the console. */
  showError(card, err) {
    card.dataset.state = 'error';
    let note = card.querySelector('.card-error');
    if (!note) {
      note = el('p', { class: 'card-error', role: 'alert' });
      card.append(note);
    }
    note.textContent = err && err.message ? err.message : String(err);
  }

  #version() {
    const info = this.ctx.info();
    return info ? info.data_version : 0;
  }

  /** (run, tag) pairs of active runs matching the filter, by tag then run. */
  #pairs() {
    const byRun = this.ctx.tagsOf(this.kind);
    const all = [];
    for (const run of this.ctx.runs.active()) for (const tag of byRun[run] || []) all.push([run, tag]);
    const filter = this.tagFilter.filter();
    const shown = all.filter(([, tag]) => filter.test(tag));
    shown.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return { all, shown };
  }

  layout() {
    const { all, shown } = this.#pairs();
    const tags = new Set(shown.map(([, t]) => t)).size;
    this.count.textContent = `${fmtInt(tags)} tag${tags === 1 ? '' : 's'} · ${fmtInt(shown.length)} card${shown.length === 1 ? '' : 's'}`;
    this.empty.hidden = shown.length > 0;
    this.empty.textContent = all.length ? 'No tags match the filter.' : `No ${this.noun} for the selected runs.`;
    const keys = shown.map(([run, tag]) => keyOf(run, tag));
    const wanted = new Set(keys);
    for (const [key, c] of this.controllers) {
      if (!wanted.has(key)) {
        if (c.destroy) c.destroy();
        this.controllers.delete(key);
        this.loaded.delete(key);
      }
    }
    this.grid.setKeys(keys);
    for (const key of this.grid.visibleKeys()) this.#refresh(key);
  }

  update(change) {
    if (change.data || change.runs) this.layout();
    for (const key of this.grid.visibleKeys()) this.#refresh(key);
  }

  /** Every live controller (for settings that apply to all cards). */
  each(fn) {
    for (const [key, c] of this.controllers) fn(c, key);
  }

  destroy() {
    this.each((c) => c.destroy && c.destroy());
    this.controllers.clear();
    this.grid.destroy();
  }
}

/**
 * registerView() arguments around a run×tag view class. The view keeps its RunTagGrid in
 * `grid`, which gets every update and is destroyed on unmount, and may keep an
 * `onThemeChange` unsubscriber in `stopTheme`.
 */
export function runTagView({ View, needsPlotly = true, ...spec }) {
  class RunTagLifecycle {
    constructor(ctx) {
      this.view = new View(ctx);
    }

    update(change) {
      this.view.grid.update(change);
    }

    destroy() {
      if (this.view.stopTheme) this.view.stopTheme();
      this.view.grid.destroy();
    }
  }
  return classView({ ...spec, needsPlotly, View: RunTagLifecycle });
}
