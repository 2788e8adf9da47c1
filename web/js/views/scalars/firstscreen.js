// What the scalars page shows first: the order of its tag charts, from /api/scalars/order
// (losses and main metrics first, then the sections most recently updated: see
// visualdl/kinds/scalar/order.py and docs/run_health.md), asked again with each data
// version; and the runs' first non-finite values, from the run table, to mark on charts.
import { getJSON } from '../../shared/api.js';

export class TagOrder {
  /** onChange(): the order arrived or changed (lay the cards out again). */
  constructor(onChange) {
    this.onChange = onChange;
    this.rank = null; // tag -> position, once known
    this.asked = null;
    // false until the first answer (or failure): the page is laid out once, in this order,
    // not alphabetically first (whose first cards would be fetched for nothing)
    this.settled = false;
  }

  /** Ask for the order of every run's tags at data `version` (once per version). The
   *  runs shown pick their tags out of it. */
  load(version) {
    const key = String(version);
    if (this.asked === key) return;
    this.asked = key;
    getJSON('api/scalars/order').then(
      (body) => {
        if (this.asked !== key || this.destroyed) return;
        const rank = new Map(body.tags.map((t, i) => [t, i]));
        const same = this.rank && this.rank.size === rank.size && [...rank].every(([t, i]) => this.rank.get(t) === i);
        this.rank = rank;
        this.settled = true;
        if (!same) this.onChange();
      },
      () => {
        this.asked = null; // the alphabet meanwhile; asked again with the next version
        if (!this.settled && !this.destroyed) {
          this.settled = true;
          this.onChange();
        }
      },
    );
  }

  /** The first-screen position of a chart's tags (its first tag's), or null. */
  position(spec) {
    if (!this.rank) return null;
    const found = (spec.tags || []).map((t) => this.rank.get(t)).filter((i) => i !== undefined);
    return found.length ? Math.min(...found) : null;
  }

  destroy() {
    this.destroyed = true;
  }
}

/** [{run, tag, step, value}]: the first non-finite value of each of `runs`, from the run
 *  table's `nan` column (null when the table has none). */
export function nanMarksOf(table, runs) {
  if (!table || !table.nan) return [];
  const wanted = new Set(runs);
  const out = [];
  table.runs.forEach((run, i) => {
    const nan = table.nan[i];
    if (nan && wanted.has(run)) out.push({ run, tag: nan.tag, step: nan.step, value: nan.value });
  });
  return out;
}
