// The comparison's parts, built from an /api/compare answer (no fetching here): the config
// table (a row per key, a column per run), the summary table of each scalar tag (last, min,
// max, best and its step per run), and the overlaid curves of each tag (a trace per run).
/* global Plotly */
import { el } from '../shared/dom.js';
import { colorOf } from '../shared/colors.js';
import { fmtValue, showName } from '../shared/format.js';
import { plotlyText, baseLayout, axis, PLOT_CONFIG } from '../shared/plot.js';
import { toNumbers } from '../shared/api.js';

const KEY_WIDTH = 220; // px
const RUN_WIDTH = 120;
const FIRST_ROWS = 40; // more than the table's box shows
const text = (v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : fmtValue(v));
const ident = (v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : `${typeof v}:${v}`);

function runHead(run) {
  return el('th', { class: 'cmp-run', scope: 'col', dataset: { run }, title: `${showName(run)}: show its config`, tabindex: '0' },
    el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }),
    showName(run));
}

/** The config table: the keys the answer holds (only the differing ones unless it was
 *  asked for all), a row each; in the full table, rows that differ are marked. The first
 *  FIRST_ROWS rows are drawn at once and the rest after the first paint (every key of 100
 *  runs is 30,000 cells). Returns {element, done}: `done` resolves once every row is in
 *  (then the table has `data-complete`). */
export function configTable(body) {
  const { keys, values, missing } = body.config;
  const rowOf = (key) => {
    const absent = new Set(missing[key] || []);
    const column = values[key];
    const idents = new Set(column.map((v, i) => (absent.has(i) ? '\u0000missing' : ident(v))));
    const cells = column.map((v, i) => (absent.has(i)
      ? el('td', { class: 'missing', title: 'not set in this run' }, '–')
      : el('td', {}, text(v))));
    return el('tr', { dataset: { key }, class: idents.size > 1 ? 'differs' : 'same' },
      el('th', { scope: 'row', class: 'cmp-key' }, key), ...cells);
  };
  const head = el('tr', {}, el('th', { scope: 'col' }, 'Key'), ...body.runs.map(runHead));
  // Fixed layout, column widths set here: the browser lays 100 x 300 cells out without
  // measuring each one's text first.
  const cols = el('colgroup', {}, el('col', { style: { width: `${KEY_WIDTH}px` } }),
    ...body.runs.map(() => el('col', { style: { width: `${RUN_WIDTH}px` } })));
  const width = KEY_WIDTH + RUN_WIDTH * body.runs.length;
  const tbody = el('tbody', {}, ...keys.slice(0, FIRST_ROWS).map(rowOf));
  const table = el('table', { class: 'hp-table cmp-config', style: { width: `${width}px` } },
    cols, el('thead', {}, head), tbody);
  const element = el('div', { class: 'hp-table-wrap cmp-wrap' }, table);
  const done = new Promise((resolve) => {
    const rest = () => {
      if (table.isConnected) { // else replaced meanwhile
        tbody.append(...keys.slice(FIRST_ROWS).map(rowOf));
        table.dataset.complete = 'true';
      }
      resolve();
    };
    if (keys.length > FIRST_ROWS) {
      requestAnimationFrame(() => setTimeout(rest, 0)); // after a paint
    } else {
      table.dataset.complete = 'true';
      resolve();
    }
  });
  return { element, done };
}

const STATS = [['last', 'Last'], ['min', 'Min'], ['max', 'Max'], ['best', 'Best'], ['best_step', 'Best step']];

/** The summary of one tag: a row per run; the best run's best value is marked. */
export function summaryTable(body, tag, onDirection) {
  const direction = body.directions[tag];
  const summaries = body.summaries[tag];
  let winner = -1;
  summaries.forEach((s, i) => {
    if (!s || typeof s.best !== 'number') return;
    const w = summaries[winner];
    if (winner < 0 || (direction === 'min' ? s.best < w.best : s.best > w.best)) winner = i;
  });
  const rows = body.runs.map((run, i) => {
    const s = summaries[i];
    const cells = STATS.map(([key]) => el('td', {
      class: `num${i === winner && key === 'best' ? ' winner' : ''}`, dataset: { stat: key, run },
    }, s && s[key] !== null && s[key] !== undefined ? fmtValue(s[key]) : '–'));
    return el('tr', { dataset: { run } }, runHead(run), ...cells);
  });
  const select = el('select', { name: 'direction', 'aria-label': `Direction of ${tag}`, dataset: { tag } },
    el('option', { value: 'min' }, 'lower is better'),
    el('option', { value: 'max' }, 'higher is better'));
  if (direction) select.value = direction;
  else select.prepend(el('option', { value: '', selected: true }, 'direction unknown'));
  select.addEventListener('change', () => onDirection(tag, select.value));
  return el('section', { class: 'cmp-tag', dataset: { tag } },
    el('div', { class: 'cmp-tag-head' }, el('h3', { class: 'hp-title' }, tag), select),
    el('div', { class: 'hp-table-wrap' }, el('table', { class: 'hp-table cmp-summary' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Run'),
        ...STATS.map(([, label]) => el('th', { scope: 'col', class: 'num' }, label)))),
      el('tbody', {}, ...rows))),
    el('div', { class: 'cmp-chart plot', dataset: { tag } }));
}

/** Draw one tag's curves, a trace per run that has the tag, into its `.cmp-chart`. */
export function drawOverlay(div, tag, series) {
  const traces = series.filter((s) => !s.error && s.steps && s.steps.length).map((s) => ({
    type: 'scattergl',
    mode: 'lines',
    x: s.steps,
    y: toNumbers(s.values),
    name: plotlyText(s.run),
    line: { color: colorOf(s.run), width: 1.5 },
    meta: { run: s.run, tag },
    hovertemplate: `${plotlyText(s.run)}<br>step %{x}: %{y}<extra></extra>`,
  }));
  const layout = baseLayout({
    height: 260,
    xaxis: axis({ title: { text: 'step' } }),
    yaxis: axis({}),
    showlegend: traces.length <= 12,
    legend: { orientation: 'h', y: -0.25 },
  });
  return Plotly.react(div, traces, layout, PLOT_CONFIG);
}
