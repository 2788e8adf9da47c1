// The scalar charts' series store: every series fetched for a full view (batched), the
// series of each zoomed chart's window, and each grouped chart's answer, each held with the
// data version it answers for. No DOM: the view asks for what a chart draws and is called
// back when an answer arrives.
import { postJSON, toNumbers } from '../../shared/api.js';
import { createBatcher } from '../../shared/batcher.js';
import { smoothingKey } from './smoothmodes.js';

const MAX_BATCH = 2000; // series per /api/scalars/batch request (the server's limit)
const MIN_LINE_POINTS = 100; // however many lines share the budget
const LINE_BUDGET = 300000; // points of a full view's batch, shared by its lines (see linePoints)
const WAIT_SECONDS = 5; // how long a batch of partial series may be held by the server (its first load)
const REST_MS = 150; // a dragged smoothing slider: refetch once it rests

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

// A data-parallel run's series of another rank than its default one is held apart.
const idOf = (run, tag, rank = null) => (rank === null || rank === undefined
  ? `${run}\u0000${tag}` : `${run}\u0000${tag}\u0000${rank}`);

export class SeriesStore {
  /** info(): the last /api/info; points(): the points a chart is wide; smoothing(): the
   *  server's smoothing parameters (smoothmodes.smoothingQuery), asked with every series;
   *  rankOf(run): the rank whose series to ask of a data-parallel run (null: its default). */
  constructor({ info, points, smoothing = () => ({}), rankOf = () => null }) {
    this.info = info;
    this.points = points;
    this.smoothing = smoothing;
    this.rankOf = rankOf;
    this.cache = new Map(); // run\0tag -> {version, series} | {version, error}
    this.inflight = new Map(); // run\0tag -> {version, wait, promise} of the fetch under way
    // Zoomed charts: key -> {window, version, wanted, series: Map(run\0tag -> series)}, the
    // window's answer drawn, while the next one is in windowsPending.
    this.windows = new Map();
    this.windowsPending = new Map();
    this.windowTimers = new Map();
    this.groups = new Map(); // key -> {request, version, groups | error}
    this.groupTimers = new Map(); // key -> timer of a grouped refetch waiting for input to rest
    this.fetchSeries = createBatcher((items) => this.#fetchMany(items));
  }

  version() {
    const info = this.info();
    return info ? info.data_version : 0;
  }

  /** True during the server's first load of the logdir (it answers the first chart's tag
   * of every run first; an answer without `loading` then needs no refetch until it ends). */
  firstLoad() {
    const info = this.info();
    return Boolean(info && !info.loaded);
  }

  /** Whether a held answer still holds for `version`. */
  current(have, version) {
    return have.version === version || (have.settled && this.firstLoad());
  }

  /** The held full series of (run, tag): {version, series, ...} or {version, error}. */
  get(run, tag) {
    return this.cache.get(idOf(run, tag, this.rankOf(run)));
  }

  /** Whether every (run, tag) of `pairs` has a series held (of any version or smoothing). */
  holds(pairs) {
    return pairs.every(([run, tag]) => {
      const have = this.cache.get(idOf(run, tag, this.rankOf(run)));
      return Boolean(have && have.series);
    });
  }

  // ---- full series ---------------------------------------------------------------------------
  /**
   * Fetch the (run, tag) `pairs` not held for `version`: a promise that they all arrived,
   * or null when every one is held. Series another chart is already fetching are waited for,
   * not fetched twice: charts share series (a tag alone, in an add_scalars chart, in a
   * layout, pinned).
   */
  load(pairs, version) {
    const waits = [];
    const query = this.smoothing();
    const skey = smoothingKey(query);
    for (const [run, tag] of pairs) {
      const rank = this.rankOf(run);
      const id = idOf(run, tag, rank);
      const have = this.cache.get(id);
      if (have && this.current(have, version) && have.skey === skey) continue;
      const pending = this.inflight.get(id);
      if (pending && pending.skey === skey && (pending.version === version || pending.wait)) {
        waits.push(pending.promise); // (a held request answers with everything loaded)
        continue;
      }
      const wait = this.firstLoad(); // held until loaded, at most WAIT_SECONDS
      const entry = { version, wait, skey, promise: null };
      entry.promise = this.fetchSeries({ run, tag, rank, wait, query, skey }).then(
        (result) => this.#store(id, version, result, entry),
        (err) => this.#store(id, version, { error: err.message }, entry),
      );
      this.inflight.set(id, entry);
      waits.push(entry.promise);
    }
    return waits.length ? Promise.all(waits) : null;
  }

  async #fetchMany(items) {
    // The server answers at most MAX_BATCH series a request: the charts on screen of a
    // sweep of 2,000 runs ask for more, so they go in several requests (one after the
    // other: the first chart's series first).
    // While the server's first load runs, a batch asks the server to hold its answer
    // until the series are complete (at most WAIT_SECONDS, then partial: a huge logdir
    // still fills in), rather than one partial answer per poll: a partial answer of
    // 2,000 series costs the load ~0.3 s of CPU.
    // Items asked with other smoothing settings (a moved slider) go in requests of their own.
    const out = new Array(items.length);
    const bySmoothing = new Map();
    items.forEach((item, i) => {
      if (!bySmoothing.has(item.skey)) bySmoothing.set(item.skey, []);
      bySmoothing.get(item.skey).push(i);
    });
    for (const indices of bySmoothing.values()) {
      const query = items[indices[0]].query;
      for (let i = 0; i < indices.length; i += MAX_BATCH) {
        const slice = indices.slice(i, i + MAX_BATCH).map((k) => items[k]);
        const points = linePoints(this.points(), slice.length);
        const wait = slice.some((item) => item.wait) ? WAIT_SECONDS : 0;
        const series = slice.map(({ run, tag, rank }) => (rank === null ? { run, tag } : { run, tag, rank }));
        const body = await postJSON('api/scalars/batch', { ...query, series, points, ...(wait ? { wait } : {}) });
        body.series.forEach((s, k) => { out[indices[i + k]] = s; });
      }
    }
    return out;
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
      version, skey: entry.skey, series: toSeries(result, entry.skey), loading: Boolean(result.loading),
      settled: !result.loading && this.firstLoad(),
    });
  }

  // ---- a zoomed chart's window, fetched at screen resolution --------------------------------
  // A step window as a step range; a wall-time window as one; a relative window as each
  // run's own wall-time range (its start plus the window's seconds). The server answers
  // min/max buckets over the window, and every point once it holds fewer than the chart is wide.

  /** `key`'s window answer when it is for window `win`, else null. */
  windowOf(key, win) {
    const held = win ? this.windows.get(key) : null;
    return held && held.series && JSON.stringify(held.window) === JSON.stringify(win) ? held : null;
  }

  /**
   * What a chart draws of (run, tag): the full series' entry, with the series of the window
   * answer `windowed` (see windowOf) where it has one. A window's series keeps its full
   * series' start and span: the relative axis' origin and unit do not move with the window.
   */
  entry(windowed, run, tag) {
    const base = this.get(run, tag);
    const part = windowed && windowed.series.get(idOf(run, tag, this.rankOf(run)));
    if (!part || !base || !base.series) return base;
    return { ...base, series: { ...part, start: base.series.start, span: base.series.span } };
  }

  /** Fetch window `win` of `key`'s `pairs` unless held for this version, window and
   *  smoothing; `onAnswer(key)` when there is an answer to draw. */
  loadWindow(key, win, pairs, version, smoothing, onAnswer) {
    const wanted = JSON.stringify([win, pairs.map(([run, tag]) => [run, tag, this.rankOf(run)]), smoothing]);
    const shown = this.windows.get(key);
    if (shown && shown.version === version && shown.wanted === wanted) {
      if (shown.series) onAnswer(key);
      return;
    }
    const pending = this.windowsPending.get(key);
    if (pending && pending.version === version && pending.wanted === wanted) return;
    const entry = { version, wanted, window: win, series: null };
    this.windowsPending.set(key, entry);
    const body = this.#windowBody(win, pairs, smoothing);
    const send = () => {
      if (this.destroyed || this.windowsPending.get(key) !== entry) return;
      postJSON('api/scalars/batch', body).then(
        (answer) => {
          if (this.destroyed || this.windowsPending.get(key) !== entry) return;
          this.windowsPending.delete(key);
          entry.series = new Map();
          for (const item of answer.series) {
            if (!item.error) entry.series.set(idOf(item.run, item.tag, item.rank), toSeries(item, smoothingKey(smoothing)));
          }
          this.windows.set(key, entry);
          onAnswer(key);
        },
        () => {
          if (this.windowsPending.get(key) === entry) this.windowsPending.delete(key);
        },
      );
    };
    // Only the smoothing changed (a dragged slider): ask once it rests, and draw the
    // window held meanwhile.
    clearTimeout(this.windowTimers.get(key));
    const sameWindow = shown && shown.series && shown.version === version &&
      JSON.stringify(shown.window) === JSON.stringify(win);
    if (sameWindow) this.windowTimers.set(key, setTimeout(send, REST_MS));
    else send();
  }

  #windowBody(win, pairs, smoothing) {
    const body = { ...smoothing, series: [], points: this.points() };
    if (win.rev === 'step') Object.assign(body, { start_step: win.start, end_step: win.end });
    else if (win.rev === 'wall') Object.assign(body, { wall_min: win.start, wall_max: win.end });
    for (const [run, tag] of pairs) {
      const item = { run, tag };
      const rank = this.rankOf(run);
      if (rank !== null) item.rank = rank;
      if (win.rev.startsWith('relative')) {
        // each run's relative axis starts at its own first wall time
        const base = this.get(run, tag);
        const origin = base && base.series ? base.series.start : NaN;
        if (!Number.isFinite(origin)) continue;
        Object.assign(item, { wall_min: origin + win.start, wall_max: origin + win.end });
      }
      body.series.push(item);
    }
    return body;
  }

  /** Forget `key`'s window answers (its zoom was reset or made on another axis). */
  dropWindow(key) {
    this.windows.delete(key);
    this.windowsPending.delete(key);
    clearTimeout(this.windowTimers.get(key));
  }

  // ---- grouped charts: one line and band per group, computed by the server ----------------
  /** `key`'s group answer when it is for `body` and still holds for `version`, else null. */
  heldGroups(key, body, version) {
    const have = this.groups.get(key);
    return have && have.request === JSON.stringify(body) && this.current(have, version) ? have : null;
  }

  /** The last group answer of `key` (maybe for an older request). */
  groupsOf(key) {
    return this.groups.get(key);
  }

  /** Ask api/scalars/groups for `body`; `onAnswer(key)` once there is something to draw. */
  loadGroups(key, body, version, onAnswer) {
    const have = this.groups.get(key);
    const entry = { version, request: JSON.stringify(body), groups: null, error: null };
    this.groups.set(key, entry);
    if (!body.runs.length) {
      entry.groups = [];
      onAnswer(key);
      return;
    }
    // A dragged smoothing slider changes the request many times a second: ask once it
    // rests (the answer of a superseded request is dropped anyway).
    clearTimeout(this.groupTimers.get(key));
    this.groupTimers.set(key, setTimeout(() => this.#fetchGroups(key, entry, body, onAnswer), have ? REST_MS : 0));
  }

  #fetchGroups(key, entry, body, onAnswer) {
    if (this.destroyed || this.groups.get(key) !== entry) return;
    postJSON('api/scalars/groups', body).then(
      (answer) => {
        entry.groups = answer.groups;
        entry.answer = answer;
        entry.settled = !answer.loading && this.firstLoad();
      },
      (err) => {
        entry.error = err.message;
      },
    ).then(() => {
      if (!this.destroyed && this.groups.get(key) === entry) onAnswer(key);
    });
  }

  /** Answers still in flight are dropped; refetches waiting for input to rest are not sent. */
  destroy() {
    this.destroyed = true;
    for (const timer of this.windowTimers.values()) clearTimeout(timer);
    for (const timer of this.groupTimers.values()) clearTimeout(timer);
  }
}

/** A series as the API sends it, with numbers parsed, its first wall time and its span
 *  (to its last point: the relative axis' unit), and the server's smoothing if any (with
 *  `smoothKey`: the settings it was asked with) and envelope. */
export function toSeries(result, skey) {
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
  if (skey !== undefined) series.smoothKey = skey;
  if (result.default_rank !== undefined) series.defaultRank = result.default_rank; // of a data-parallel run
  if (result.lower) Object.assign(series, { lower: toNumbers(result.lower), upper: toNumbers(result.upper) });
  return series;
}
