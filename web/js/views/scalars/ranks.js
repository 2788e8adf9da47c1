// Data-parallel runs in the scalars view: which ranks each run has, its elastic restarts and
// its checkpoints (/api/ranks, /api/checkpoints); the rank whose curves the charts draw (rank
// 0, the default, or any other: kept in the URL); the charts that overlay every rank of a tag
// (/api/scalars/ranks); the marks of the restarts on a step axis; and the panel that lists
// the ranks, restarts and checkpoints of the runs shown. RankCharts is what the view holds:
// it asks the view (its `host`) for a chart's spec and runs, and draws through it.
import * as state from '../../shared/state.js';
import { getJSON } from '../../shared/api.js';
import { el, setChildren, uid } from '../../shared/dom.js';
import { showName } from '../../shared/format.js';
import { toSeries } from './store.js';
import { lineStyle } from './chart.js';

state.declare('rank', 0); // the rank drawn of the runs that have it (0: every run's default)
state.declare('overlay', []); // keys of the charts that draw every rank

const MARK_COLOR = '#8c564b';
export const MAX_LISTED = 50; // runs listed in the panel (a sweep of thousands: filter to see others)

export class RankInfo {
  /** onChange(): new answers arrived (the panel and the charts draw them). */
  constructor(onChange) {
    this.onChange = onChange;
    this.runs = new Map(); // run -> {version, ranks?, checkpoints?}
    this.overlays = new Map(); // run\0tag -> {version, points, series: [{rank, series}]}
  }

  /** Ask for what `workerRuns` (runs with ranks or restarts) and `checkpointRuns` hold at
   *  data `version`, unless held. */
  load(workerRuns, checkpointRuns, version) {
    const wanted = new Set([...workerRuns, ...checkpointRuns]);
    for (const run of [...this.runs.keys()]) if (!wanted.has(run)) this.runs.delete(run);
    for (const run of wanted) {
      const have = this.runs.get(run);
      if (have && have.version === version) continue;
      const entry = { version, ranks: have && have.ranks, checkpoints: have && have.checkpoints };
      this.runs.set(run, entry);
      const asks = [];
      if (workerRuns.includes(run)) asks.push(getJSON('api/ranks', { run }).then((body) => { entry.ranks = body; }));
      else entry.ranks = null;
      if (checkpointRuns.includes(run)) {
        asks.push(getJSON('api/checkpoints', { run }).then((body) => { entry.checkpoints = body.checkpoints; }));
      } else entry.checkpoints = null;
      Promise.all(asks).then(() => this.runs.get(run) === entry && this.onChange(), () => {});
    }
  }

  /** The ranks of `run` ([] for a run of one process, or not known yet). */
  ranksOf(run) {
    const have = this.runs.get(run);
    return have && have.ranks ? have.ranks.ranks.map((r) => r.rank) : [];
  }

  /** The rank chosen (0: the default series). */
  selected() {
    const rank = Number(state.get('rank'));
    return Number.isInteger(rank) && rank > 0 ? rank : 0;
  }

  /** The rank to ask of `run`: the chosen one where the run has it, else null (its default). */
  rankOf(run) {
    const rank = this.selected();
    return rank && this.ranksOf(run).includes(rank) ? rank : null;
  }

  /** Every rank any of `runs` has, sorted. */
  ranksOfRuns(runs) {
    return [...new Set(runs.flatMap((r) => this.ranksOf(r)))].sort((a, b) => a - b);
  }

  resizesOf(run) {
    const have = this.runs.get(run);
    return have && have.ranks ? have.ranks.resizes : [];
  }

  // ---- the per-rank overlay of a chart --------------------------------------------------
  overlayOn(key) {
    return state.get('overlay').includes(key);
  }

  toggleOverlay(key) {
    const keys = state.get('overlay');
    state.set({ overlay: keys.includes(key) ? keys.filter((k) => k !== key) : [...keys, key] });
  }

  /** Every rank's series of `tag` in each of `runs`, downsampled to `points`: a promise
   *  that they arrived, or null when all are held for `version`. */
  loadOverlay(runs, tag, points, version) {
    const asks = [];
    for (const run of runs) {
      const id = `${run}\u0000${tag}`;
      const have = this.overlays.get(id);
      if (have && have.version === version && have.points === points) continue;
      const entry = { version, points, series: have ? have.series : null };
      this.overlays.set(id, entry);
      asks.push(getJSON('api/scalars/ranks', { run, tag, points }).then((body) => {
        entry.series = body.series.map((s) => ({ rank: s.rank, series: toSeries(s) }));
      }, (err) => { entry.error = err.message; }));
    }
    return asks.length ? Promise.all(asks) : null;
  }

  /** The lines of every rank of `run`'s `tag` (held by loadOverlay), styled by rank. */
  overlayLines(run, tag, color) {
    const have = this.overlays.get(`${run}\u0000${tag}`);
    if (!have || !have.series) return null;
    return have.series.map(({ rank, series }) => ({
      run, tag, color, series, rank, name: `${run} · rank ${rank}`, style: lineStyle(rank),
      version: [have.version, have.points],
    }));
  }
}

/**
 * Shapes and annotations marking the elastic restarts of `runs` on a step axis: a vertical
 * line at the step training resumed at, and a label whose hover text says what happened.
 */
export function resizeMarks(runs, info) {
  const shapes = [];
  const annotations = [];
  for (const run of runs) {
    for (const r of info.resizesOf(run)) {
      shapes.push({
        type: 'line', xref: 'x', yref: 'paper', x0: r.step, x1: r.step, y0: 0, y1: 1,
        line: { color: MARK_COLOR, width: 1.5, dash: 'dashdot' }, name: 'resize-mark',
      });
      annotations.push({
        x: r.step, y: 0, xref: 'x', yref: 'paper', yanchor: 'bottom', showarrow: false,
        text: `↻${r.restart}`, font: { size: 10, color: MARK_COLOR },
        hovertext: `${showName(run)}: restart ${r.restart} at step ${r.step}, ${r.world_size} worker${r.world_size === 1 ? '' : 's'}`,
        name: 'resize-mark',
      });
    }
  }
  return { shapes, annotations };
}

/**
 * The panel of the data-parallel runs shown: the rank selector (only when a run has ranks),
 * then per run its ranks, restarts and checkpoints. onRank(): the chosen rank changed.
 */
export class WorkersPanel {
  constructor(info, onRank) {
    this.info = info;
    this.onRank = onRank;
    const headingId = uid('workers');
    this.selectId = uid('rank');
    this.select = el('select', { id: this.selectId, name: 'rank' });
    this.select.addEventListener('change', () => {
      state.set({ rank: Number(this.select.value) });
      this.onRank();
    });
    this.selector = el('div', { class: 'field rank-field' }, el('label', { for: this.selectId }, 'Rank drawn'), this.select);
    this.list = el('div', { class: 'workers-runs' });
    this.element = el('section', { class: 'workers-panel', hidden: true, 'aria-labelledby': headingId },
      el('h2', { id: headingId, class: 'workers-heading' }, 'Workers and checkpoints'), this.selector, this.list);
  }

  /** Show what `runs` (the runs the charts draw) have. */
  render(runs) {
    const info = this.info;
    const shown = runs.filter((r) => info.runs.has(r));
    this.element.hidden = shown.length === 0;
    const ranks = info.ranksOfRuns(shown);
    this.selector.hidden = ranks.length === 0;
    const options = ranks.length ? ranks : [0];
    const chosen = info.selected();
    const key = JSON.stringify(options);
    if (this.optionsKey !== key) {
      this.optionsKey = key;
      setChildren(this.select, ...options.map((r) => el('option', { value: String(r) }, r === 0 ? '0 (default)' : String(r))));
    }
    this.select.value = String(options.includes(chosen) ? chosen : 0);
    const listKey = JSON.stringify(shown.map((r) => [r, info.runs.get(r).ranks, info.runs.get(r).checkpoints]));
    if (this.listKey === listKey) return; // (rebuilt only when something changed: focus stays)
    this.listKey = listKey;
    const opened = new Map([...this.list.querySelectorAll('details')].map((d) => [d.dataset.run, d.open]));
    const listed = shown.slice(0, MAX_LISTED);
    const more = shown.length - listed.length;
    setChildren(this.list, ...listed.map((run) => runBlock(run, info.runs.get(run), opened.get(run) ?? shown.length <= 3)),
      ...(more ? [el('p', { class: 'count' }, `and ${more} more run${more === 1 ? '' : 's'} (filter the runs to see them)`)] : []));
  }
}

function table(caption, head, rows, cls) {
  return el('table', { class: `data-table ${cls}` },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((c) => el('td', {}, String(c)))))));
}

function runBlock(run, entry, open) {
  const body = entry.ranks;
  const checkpoints = entry.checkpoints || [];
  const parts = [];
  if (body && body.ranks.length) parts.push(`world size ${body.world_size}`, `${body.restarts} restart${body.restarts === 1 ? '' : 's'}`);
  parts.push(`${checkpoints.length} checkpoint${checkpoints.length === 1 ? '' : 's'}`);
  const blocks = [];
  if (body && body.ranks.length) {
    blocks.push(table(`Ranks of ${showName(run)}`, ['Rank', 'Host', 'PID', 'World size'],
      body.ranks.map((r) => [r.rank, r.host, r.pid, r.world_size]), 'ranks-table'));
  }
  if (body && body.resizes.length) {
    blocks.push(table(`Restarts of ${showName(run)}`, ['Restart', 'Resumed at step', 'World size'],
      body.resizes.map((r) => [r.restart, r.step, r.world_size]), 'resizes-table'));
  }
  if (checkpoints.length) {
    blocks.push(table(`Checkpoints of ${showName(run)}`, ['Step', 'Path'],
      checkpoints.map((c) => [c.step, c.path]), 'checkpoints-table'));
  }
  const details = el('details', { class: 'run-workers', dataset: { run } },
    el('summary', {}, `${showName(run)}: ${parts.join(' · ')}`), ...blocks);
  details.open = open;
  return details;
}

/**
 * The scalars view's part for data-parallel runs. host: {spec(key), runs(key) (the chart's
 * runs), has(run, tag), points(), store() (the SeriesStore), loading(key), draw(key),
 * ensure(key) (fetch what it draws, then draw it), redraw()} of the view; ctx: the view's context (active runs, tags by kind).
 */
export class RankCharts {
  constructor(ctx, host) {
    this.ctx = ctx;
    this.host = host;
    this.info = new RankInfo(() => this.#changed());
    this.panel = new WorkersPanel(this.info, () => this.#changed());
    this.element = this.panel.element;
  }

  #changed() {
    this.panel.render(this.ctx.runs.active());
    this.host.redraw();
  }

  rankOf(run) {
    return this.info.rankOf(run);
  }

  /** After new data or another choice of runs: ask for the active runs' workers (the charts
   *  draw them) and the listed ones' checkpoints. */
  update(version) {
    const active = this.ctx.runs.active();
    const workers = this.ctx.tagsOf('workers');
    const checkpoints = this.ctx.tagsOf('checkpoint');
    const listed = active.filter((r) => workers[r] || checkpoints[r]).slice(0, MAX_LISTED);
    this.info.load(active.filter((r) => workers[r]), listed.filter((r) => checkpoints[r]), version);
    this.panel.render(active);
  }

  /** `card` with a "Ranks" button when it is a tag's chart (shown when a run has ranks). */
  decorate(card, spec, key) {
    if (spec.kind !== 'tag') return card;
    const button = el('button', { type: 'button', class: 'btn', name: 'overlay', 'aria-pressed': String(this.info.overlayOn(key)), hidden: true }, 'Ranks');
    button.setAttribute('aria-label', `Draw every rank in chart ${spec.title}`);
    button.addEventListener('click', () => {
      this.info.toggleOverlay(key);
      button.setAttribute('aria-pressed', String(this.info.overlayOn(key)));
      this.host.ensure(key);
    });
    card.querySelector('.card-actions').prepend(button);
    return card;
  }

  #rankedRuns(key) {
    return this.host.runs(key).filter((r) => this.info.ranksOf(r).length);
  }

  /** Whether `key`'s chart draws every rank (its button is on and a run of it has ranks). */
  overlaid(key) {
    const spec = this.host.spec(key);
    return Boolean(spec && spec.kind === 'tag' && this.info.overlayOn(key) && this.#rankedRuns(key).length);
  }

  /** Fetch what an overlaid chart draws (every rank of its ranked runs, the other runs'
   *  series), then draw it. */
  ensure(key, version) {
    const tag = this.host.spec(key).tags[0];
    const runs = this.host.runs(key).filter((r) => this.host.has(r, tag));
    const ranked = runs.filter((r) => this.info.ranksOf(r).length);
    const plain = runs.filter((r) => !ranked.includes(r)).map((r) => [r, tag]);
    const arriving = [this.info.loadOverlay(ranked, tag, this.host.points(), version), this.host.store().load(plain, version)];
    if (!arriving.some(Boolean)) {
      this.host.draw(key);
      return;
    }
    this.host.loading(key);
    Promise.all(arriving).then(() => this.host.draw(key));
  }

  /** The lines `found` (the chart's) draw: each run's series (of the rank drawn), or every
   *  rank's when `overlaid`; `entry(run, tag)`: the store's held entry. */
  lines(found, overlaid, entry, colorOf) {
    return found.flatMap((line) => {
      if (overlaid && this.info.ranksOf(line.run).length) {
        return this.info.overlayLines(line.run, line.tag, colorOf(line.run)) || [];
      }
      const e = entry(line.run, line.tag);
      if (!e || !e.series) return [];
      const rank = this.info.rankOf(line.run) ?? e.series.defaultRank ?? null; // the rank drawn
      return [{ ...line, color: colorOf(line.run), series: e.series, version: [e.version, e.skey], rank }];
    });
  }

  /** The restart marks of `lines`' runs on a step axis (null on another: chart.js draws
   *  them, opts.marks), and the card's "Ranks" button shown when a run of it has ranks. */
  marks(card, key, lines, xMode) {
    const button = card.querySelector('button[name=overlay]');
    if (button) button.hidden = this.#rankedRuns(key).length === 0;
    return xMode === 'step' ? resizeMarks([...new Set(lines.map((l) => l.run))], this.info) : null;
  }

  /** Say on `card` (its note, data-rank) which rank its chart draws. */
  note(card, lines, overlaid) {
    const ranked = lines.filter((l) => l.rank !== undefined && l.rank !== null);
    card.dataset.rank = overlaid ? 'all' : ranked.length ? String(ranked[0].rank) : '';
    const note = card.querySelector('.card-note');
    if (overlaid) note.textContent += ' · every rank';
    else if (ranked.length) note.textContent += ` · rank ${ranked[0].rank}`;
  }
}
