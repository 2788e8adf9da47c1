// The run table's extra columns, no DOM: each run's config as dotted keys (/api/runs/config:
// add_config merged with hparams) and any other field the runs API gives a run (/api/runs:
// a `state`, a GPU peak...), so the value filter ("model.depth>=12 state=crashed") and the
// "differences only" switch work on them as on hparams.
import { getJSON } from './api.js';

/** /api/runs/config and /api/runs together; a failed one is left out (the table still works). */
export async function fetchRunExtras() {
  const [config, runs] = await Promise.all([
    getJSON('api/runs/config').catch(() => null),
    getJSON('api/runs').catch(() => null),
  ]);
  return { config, runs };
}

/** `table` (an /api/runs/table answer) with config keys as hparam columns (a run's config
 *  value replaces its hparam of the same name, as the server merges them) and run fields in
 *  `table.fields` ({name: [value per run]}). */
export function withExtras(table, extras) {
  if (!table || !extras) return table;
  const index = new Map(table.runs.map((r, i) => [r, i]));
  const n = table.runs.length;
  const hparams = { ...(table.hparams || {}) };
  const cfg = extras.config;
  if (cfg && Array.isArray(cfg.runs)) {
    const at = cfg.runs.map((r) => index.get(r));
    const fill = (key, valueAt) => {
      const column = hparams[key] ? hparams[key].slice() : new Array(n).fill(null);
      at.forEach((i, k) => { if (i !== undefined) column[i] = valueAt(k); });
      hparams[key] = column;
    };
    for (const [key, values] of Object.entries(cfg.columns || {})) fill(key, (k) => values[k]);
    for (const [key, value] of Object.entries(cfg.same || {})) fill(key, () => value);
  }
  return { ...table, hparams: sortedKeys(hparams), fields: runFields(extras.runs, index, n) };
}

function sortedKeys(obj) {
  return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, obj[k]]));
}

const isValue = (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Every field /api/runs gives a run besides its name, in any of the shapes a run list
 *  takes: objects ({run, state, ...}), columns ({runs: [...], state: [...]}) or maps
 *  ({state: {run: value}}); an object value becomes dotted names (`health.state`). */
export function runFields(body, index, n) {
  const fields = {};
  if (!body || !Array.isArray(body.runs)) return fields;
  const put = (name, i, v) => {
    if (i === undefined) return;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, sub] of Object.entries(v)) put(`${name}.${k}`, i, sub);
      return;
    }
    if (!isValue(v)) return;
    if (!fields[name]) fields[name] = new Array(n).fill(null);
    fields[name][i] = v;
  };
  const names = body.runs.map((item) => (item && typeof item === 'object' ? item.run ?? item.name : item));
  body.runs.forEach((item, k) => {
    if (!item || typeof item !== 'object') return;
    for (const [key, v] of Object.entries(item)) if (key !== 'run' && key !== 'name') put(key, index.get(names[k]), v);
  });
  for (const [key, value] of Object.entries(body)) {
    if (key === 'runs' || !value || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      if (value.length === names.length) value.forEach((v, k) => put(key, index.get(names[k]), v));
    } else {
      for (const [run, v] of Object.entries(value)) put(key, index.get(run), v);
    }
  }
  return fields;
}

const ident = (v) => (v && typeof v === 'object' ? JSON.stringify(v) : `${typeof v}:${v}`);

/** `columns` without the hparam/config ones whose value is the same in every run of `runs`
 *  (the "differences only" switch); other columns stay. */
export function differingColumns(columns, table, rows, runs) {
  if (!table || runs.length < 2) return columns;
  return columns.filter((c) => {
    if (c.kind !== 'hparam') return true;
    const column = table.hparams[c.id.slice(3)] || [];
    const first = ident(column[rows.get(runs[0])] ?? null);
    return runs.some((r) => ident(column[rows.get(r)] ?? null) !== first);
  });
}
