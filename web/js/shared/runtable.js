// The run table's one column model, no DOM: a run's columns (the run, each hparam, the last
// value of each metric, start time, last update), their values, text and order, and the
// value filter ("lr<0.01 opt=adam loss<=0.3"). The sidebar's run list and the hparams
// dashboard both use it. Thousands of runs: everything here is a pass over arrays, no
// per-keystroke allocation beyond the filtered index list.
//
// A table is column by column, as /api/runs/table answers: {runs: [run], hparams: {name:
// [value]}, metrics: {tag: [value]}, start_time?: [t], last_update?: [t]}; tableOfHParams
// makes one of the /api/hparams answer. Column ids: 'run', 'hp:<name>', 'm:<tag>', 'start',
// 'updated', 'state' and 'nan' (run health), 'world' and 'restarts' (data-parallel runs).
import { fmtValue } from './format.js';
import { safeRegExp, bounded } from './regex.js';

/** Columns of a table: run, each hparam, each metric, and the times when it has them. */
export function columnsOf(table) {
  const cols = [{ id: 'run', label: 'Run', kind: 'run' }];
  if (!table) return cols;
  for (const name of Object.keys(table.hparams || {})) cols.push({ id: `hp:${name}`, label: name, kind: 'hparam' });
  for (const tag of Object.keys(table.metrics || {})) cols.push({ id: `m:${tag}`, label: tag, kind: 'metric' });
  if (table.start_time) cols.push({ id: 'start', label: 'Started', kind: 'time' });
  if (table.last_update) cols.push({ id: 'updated', label: 'Updated', kind: 'time' });
  if (hasGpuPeak(table)) cols.push({ id: 'gpu', label: 'GPU mem peak', kind: 'bytes' });
  if (hasWorkers(table)) {
    cols.push({ id: 'world', label: 'World size', kind: 'workers' }, { id: 'restarts', label: 'Restarts', kind: 'workers' });
  }
  cols.push(...healthColumns(table));
  return cols;
}

/** The table of an /api/hparams answer (a row per run) with its runs in the answer's order. */
export function tableOfHParams(answer) {
  const rows = answer.runs;
  const column = (names, get) => Object.fromEntries(names.map((n) => [n, rows.map((r) => get(r, n) ?? null)]));
  return {
    runs: rows.map((r) => r.run),
    hparams: column(answer.hparam_names, (r, n) => r.hparams[n]),
    metrics: column(answer.metric_names, (r, n) => r.metrics[n]),
  };
}

/** Index the table by run so a row's cells are O(1) lookups. */
export function indexTable(table) {
  const rows = new Map();
  if (!table) return rows;
  table.runs.forEach((run, i) => rows.set(run, i));
  return rows;
}

/** Metric values arrive as numbers, null, or "NaN"/"Infinity"/"-Infinity" strings. */
function num(v) {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return v;
}

/** The value of column `id` for `run` (null when the run has none). */
export function cellValue(table, rows, run, id) {
  if (id === 'run') return run;
  const i = rows.get(run);
  if (i === undefined || !table) return null;
  if (id === 'start') return table.start_time[i];
  if (id === 'updated') return table.last_update[i];
  if (id === 'gpu') return table.gpu_memory_peak ? table.gpu_memory_peak[i] ?? null : null;
  if (id === 'world') return table.world_size ? table.world_size[i] ?? null : null;
  if (id === 'restarts') return table.restarts ? table.restarts[i] ?? null : null;
  if (id === 'state' || id === 'nan') return healthValue(table, i, id);
  if (id.startsWith('hp:')) {
    const column = table.hparams[id.slice(3)];
    return column ? column[i] ?? null : null;
  }
  if (id.startsWith('m:')) {
    const column = table.metrics[id.slice(2)];
    return column ? num(column[i] ?? null) : null;
  }
  if (id.startsWith('f:')) { // a field of the runs API (runconfig.js: table.fields)
    const column = (table.fields || {})[id.slice(2)];
    return column ? column[i] ?? null : null;
  }
  return null;
}

/** Text of one cell in the run list ('–' when missing; times as local dates). */
export function cellText(value, id) {
  if (value === null || value === undefined) return '–';
  if (id === 'start' || id === 'updated') return new Date(value * 1000).toLocaleString();
  if (id === 'gpu') return `${(value / 2 ** 30).toFixed(2)} GiB`;
  if (id === 'state') return `${STATE_BADGES[value] || ''} ${value}`.trim();
  return fmtValue(value);
}

const missing = (v) => v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));

/** Compare two cells: numbers numerically, others as text; missing values last. */
function compareValues(a, b) {
  const na = missing(a);
  const nb = missing(b);
  if (na || nb) return na === nb ? 0 : na ? 1 : -1; // missing values last, either order
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/** Sort `runs` in place by column `key` ("-" prefix: descending; missing values last either
 *  way); ties, and the run column, by run name. */
export function sortRuns(runs, key, table, rows) {
  const desc = key.startsWith('-');
  const id = desc ? key.slice(1) : key;
  if (id === 'run') {
    runs.sort((a, b) => (desc ? -1 : 1) * (a < b ? -1 : a > b ? 1 : 0));
    return runs;
  }
  const values = new Map(runs.map((r) => [r, cellValue(table, rows, r, id)]));
  runs.sort((a, b) => {
    const va = values.get(a);
    const vb = values.get(b);
    if (missing(va) || missing(vb)) return compareValues(va, vb) || (a < b ? -1 : 1);
    return (desc ? -1 : 1) * compareValues(va, vb) || (a < b ? -1 : a > b ? 1 : 0);
  });
  return runs;
}

const OPS = ['>=', '<=', '!=', '==', '=', '>', '<', '~'];

/**
 * Parse a value filter: conditions separated by spaces or commas, all must hold.
 * `name op value`, op one of >= <= != = == > < ~ (regex). `name` is an hparam or a scalar
 * tag (its last value). Returns {ok, error, conditions: [{name, op, value, re?}], tags}.
 */
export function parseWhere(text) {
  const conditions = [];
  const tags = [];
  const parts = (text || '').split(/[\s,]+/).filter(Boolean);
  for (const part of parts) {
    const op = OPS.map((o) => [o, part.indexOf(o)]).filter(([, at]) => at > 0)
      .sort((x, y) => x[1] - y[1] || y[0].length - x[0].length)[0];
    if (!op) return { ok: false, error: `"${part}" is not name<op>value (ops: ${OPS.join(' ')})`, conditions: [], tags: [] };
    const name = part.slice(0, op[1]);
    const raw = part.slice(op[1] + op[0].length);
    if (raw === '') return { ok: false, error: `"${part}" has no value`, conditions: [], tags: [] };
    const cond = { name, op: op[0], raw, value: Number(raw) };
    if (op[0] === '~') {
      const { re, limit, error } = safeRegExp(raw, 'i'); // from the filter box or the URL
      if (error) return { ok: false, error: `"${part}": ${error}`, conditions: [], tags: [] };
      Object.assign(cond, { re, limit });
    }
    conditions.push(cond);
    tags.push(name);
  }
  return { ok: true, error: null, conditions, tags };
}

function holds(cond, v) {
  if (v === null || v === undefined) return cond.op === '!=';
  if (cond.op === '~') return cond.re.test(bounded(String(v), cond.limit));
  const numeric = typeof v === 'number' && rawIsNumber(cond.raw);
  if (typeof v === 'boolean') v = String(v);
  if (!numeric) {
    const a = String(v).toLowerCase();
    const b = cond.raw.toLowerCase();
    if (cond.op === '=' || cond.op === '==') return a === b;
    if (cond.op === '!=') return a !== b;
    const c = a.localeCompare(b, undefined, { numeric: true });
    return { '>': c > 0, '<': c < 0, '>=': c >= 0, '<=': c <= 0 }[cond.op];
  }
  const x = cond.value;
  switch (cond.op) {
    case '=':
    case '==': return v === x;
    case '!=': return v !== x;
    case '>': return v > x;
    case '<': return v < x;
    case '>=': return v >= x;
    case '<=': return v <= x;
    default: return false;
  }
}

function rawIsNumber(raw) {
  return raw.trim() !== '' && Number.isFinite(Number(raw));
}

/** A predicate run -> bool for parsed conditions (hparam or config key first, else metric of
 *  that name, else a field of the runs API). */
export function whereTest(parsed, table, rows) {
  if (!parsed.ok || !parsed.conditions.length) return () => true;
  return (run) => parsed.conditions.every((cond) => {
    let v = cellValue(table, rows, run, `hp:${cond.name}`);
    if ((v === null || v === undefined) && !(table && table.hparams && cond.name in table.hparams)) {
      v = cellValue(table, rows, run, `m:${cond.name}`);
      if (v === null && !(table && table.metrics && cond.name in table.metrics)) {
        v = cellValue(table, rows, run, `f:${cond.name}`); // any other run field (state=crashed)
      }
    }
    if (v === null && cond.name === 'state') v = cellValue(table, rows, run, 'state'); // run health
    return holds(cond, v);
  });
}

// ---- the GPU memory peak column (system metrics) ----------------------------------------------

function hasGpuPeak(table) {
  return Boolean(table.gpu_memory_peak && table.gpu_memory_peak.some((v) => v !== null));
}

/** Add /api/system/peaks' answer to a table as its column `gpu_memory_peak` (bytes per run,
 *  null for runs without GPU samples). */
export function withGpuPeaks(table, peaks) {
  const byRun = (peaks && peaks.runs) || {};
  return { ...table, gpu_memory_peak: table.runs.map((run) => byRun[run] ?? null) };
}

// ---- data-parallel runs (/api/runs/workers) ----------------------------------------------

function hasWorkers(table) {
  return Boolean(table.world_size && table.world_size.some((v) => v !== null));
}

/** Add /api/runs/workers' answer to a table as its columns `world_size` and `restarts`
 *  (null for runs of one process). */
export function withWorkers(table, workers) {
  const byRun = (workers && workers.runs) || {};
  const of = (name) => table.runs.map((run) => (byRun[run] ? byRun[run][name] ?? null : null));
  return { ...table, world_size: of('world_size'), restarts: of('restarts') };
}

// ---- run health (/api/runs/table's `state` and `nan` columns) ------------------------------
const STATE_BADGES = { running: '●', finished: '✓', stalled: '⏸', crashed: '✗' };

/** The State column, and the First NaN column when a run has a non-finite value. */
function healthColumns(table) {
  const cols = [];
  if (table.state) cols.push({ id: 'state', label: 'State', kind: 'state' });
  if (table.nan && table.nan.some(Boolean)) cols.push({ id: 'nan', label: 'First NaN', kind: 'nan' });
  return cols;
}

/** A run's state ("running", ...), or its first non-finite value as "NaN at step S (tag)". */
function healthValue(table, i, id) {
  if (id === 'state') return (table.state && table.state[i]) || null;
  const nan = table.nan && table.nan[i];
  return nan ? `${nan.value} at step ${nan.step} (${nan.tag})` : null;
}
