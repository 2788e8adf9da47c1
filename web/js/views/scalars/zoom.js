// The scalars view's zoom controller: the x window each chart is zoomed to, on the axis it
// was made on (see xAxisOf: 'step' in steps, 'wall' in epoch seconds, 'relative|unit' in
// seconds since each run's start), and each chart's x axis as last drawn, which turns the
// range plotly reports into such a window. The window's series are the store's business.
import { fmtInt } from '../../shared/dom.js';
import { fmtWall } from '../../shared/format.js';

export class ZoomController {
  /** onChange(key): the window of `key` was set or reset; onClear(key): it is gone. */
  constructor({ onChange, onClear }) {
    this.onChange = onChange;
    this.onClear = onClear;
    this.windows = new Map(); // key -> {rev, start, end}
    this.axes = new Map(); // key -> {rev, unit} of the chart as last drawn
  }

  /** The window `key` is zoomed to, or undefined. */
  get(key) {
    return this.windows.get(key);
  }

  has(key) {
    return this.windows.has(key);
  }

  /** `key`'s window when it is a step range (what a grouped chart can be asked for), else null. */
  stepWindow(key) {
    const win = this.windows.get(key);
    return win?.rev === 'step' ? win : null;
  }

  /** Remember the x axis `key` was drawn on: `rev` (xAxisOf's revision) and the relative unit. */
  drawnOn(key, rev, unit) {
    this.axes.set(key, { rev, unit });
  }

  /** Forget a window made on another axis than `axisRev()` gives now (the x mode, its unit
   *  or grouping changed: plotly drops the user's range with it, as the axis' uirevision differs). */
  dropStale(key, axisRev) {
    const win = this.windows.get(key);
    if (win && win.rev !== axisRev()) this.clear(key);
  }

  clear(key) {
    this.windows.delete(key);
    this.onClear(key);
  }

  /** The x range plotly reports for `key`'s chart (null: autorange, the zoom was reset). */
  zoomTo(key, range) {
    if (!range) {
      if (!this.windows.has(key)) return;
      this.clear(key);
      this.onChange(key);
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
    this.windows.set(key, { rev: axis.rev, start, end });
    this.onChange(key);
  }

  /** A note on the window `win` shown, for the card. */
  note(key, win) {
    if (win.rev === 'step') return `steps ${fmtInt(win.start)}–${fmtInt(win.end)}`;
    if (win.rev === 'wall') return `wall time ${fmtWall(win.start)}–${fmtWall(win.end)}`;
    const unit = this.axes.get(key)?.unit;
    const div = unit ? unit.div : 1;
    const fmt = (t) => Number((t / div).toPrecision(6));
    return `relative ${fmt(win.start)}–${fmt(win.end)} ${unit ? unit.label : 's'}`;
  }
}

/** A card's data-window: "start:end" for steps, "rev:start:end" on a time axis. */
export function windowKey(win) {
  if (!win) return '';
  return win.rev === 'step' ? `${win.start}:${win.end}` : `${win.rev}:${win.start}:${win.end}`;
}
