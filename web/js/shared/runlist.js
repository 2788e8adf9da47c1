// The run list in the sidebar: a virtualized run table (only the rows in view are in the DOM,
// so 10,000 runs scroll and filter like 10), a color per run, a regex filter on the name, a
// value filter on hparams and last metric values ("lr<0.01 opt=adam loss<0.3"), sorting by
// any column, select all / none of the runs matching the filters, compare the selected ones,
// and hide the config columns that are the same in every listed run ("differences only").
// Selection is stored in the URL as the set of runs switched off ("off"), so runs that appear
// later are shown by default and a shared link still reproduces the view.
import { el, setChildren, uid, debounce } from './dom.js';
import * as state from './state.js';
import { getJSON } from './api.js';
import { assignColors, colorOf } from './colors.js';
import { createFilterInput } from './filterinput.js';
import { showName } from './format.js';
import {
  columnsOf, indexTable, cellValue, cellText, sortRuns, parseWhere, whereTest, withGpuPeaks, withWorkers,
} from './runtable.js';
import { fetchRunExtras, withExtras, differingColumns } from './runconfig.js';
import { requestComparison, MAX_COMPARE } from './comparelink.js';

state.declare('off', []);
state.declare('runFilter', '');
state.declare('runWhere', '');
state.declare('rsort', 'run');
state.declare('rcols', []); // scalar tags whose last value is a column
state.declare('rdiff', false); // hide config/hparam columns equal in every listed run

const ROW = 26; // px: every row is this tall, so the visible slice is arithmetic
const OVERSCAN = 6;

/** createRunList(container, onChange) -> {setRuns(runs), active(), all(), table(), onTable(fn)} */
export function createRunList(container, onChange) {
  let runs = []; // every run, by name
  let order = []; // runs in the sort order
  let shown = []; // order, filtered
  let off = new Set(state.get('off'));
  let table = null;
  let rows = new Map();
  let columns = columnsOf(null);
  let allColumns = columns; // columns before the "differences only" switch
  let where = parseWhere(state.get('runWhere'));
  let matches = () => true;
  const tableListeners = [];
  const notify = debounce(() => onChange(), 120);

  const headingId = uid('runs');
  const count = el('span', { class: 'count', 'aria-live': 'polite' });
  const filter = createFilterInput({
    label: 'Filter runs (regex)',
    placeholder: 'e.g. lr=0\\.1|baseline',
    value: state.get('runFilter'),
    name: 'run-filter',
    onChange: (text) => {
      state.set({ runFilter: text });
      onChange();
    },
  });
  // The list follows each keystroke at once; charts follow once typing pauses (onChange).
  filter.input.addEventListener('input', () => applyFilters());

  const whereId = uid('where');
  const whereInput = el('input', {
    id: whereId,
    type: 'search',
    name: 'run-where',
    placeholder: 'e.g. lr<0.01 opt=adam loss<0.3',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': `${whereId}-error`,
  });
  whereInput.value = state.get('runWhere');
  const whereError = el('p', { id: `${whereId}-error`, class: 'filter-error', role: 'alert', hidden: true });
  whereInput.addEventListener('input', () => {
    where = parseWhere(whereInput.value);
    showWhereError();
    state.set({ runWhere: whereInput.value });
    if (where.ok && where.tags.some((t) => !hasColumn(t))) fetchTable();
    applyFilters();
    notify();
  });

  const metricsInput = el('input', {
    type: 'text',
    name: 'run-metrics',
    placeholder: 'e.g. loss, acc',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-label': 'Metric columns (scalar tags, comma-separated)',
  });
  metricsInput.value = state.get('rcols').join(', ');
  metricsInput.addEventListener('change', () => {
    const tags = metricsInput.value.split(',').map((t) => t.trim()).filter(Boolean);
    state.set({ rcols: [...new Set(tags)] });
    fetchTable();
  });

  const bulk = (on) => () => {
    shown.forEach((r) => (on ? off.delete(r) : off.add(r)));
    saveAndNotify();
  };
  const buttons = el(
    'div',
    { class: 'button-row' },
    el('button', { type: 'button', name: 'select-all', title: 'Select every run matching the filters', onclick: bulk(true) }, 'Select all matching'),
    el('button', { type: 'button', name: 'select-none', title: 'Deselect every run matching the filters', onclick: bulk(false) }, 'Select none matching'),
    el('button', {
      type: 'button', name: 'compare-runs', title: `Compare the selected runs that match the filters (2 to ${MAX_COMPARE})`,
      onclick: () => requestComparison(runs.filter((r) => !off.has(r) && matches(r))),
    }, 'Compare selected'),
  );
  const diffBox = el('input', { type: 'checkbox', name: 'run-diff-only' });
  diffBox.checked = state.get('rdiff');
  diffBox.addEventListener('change', () => {
    state.set({ rdiff: diffBox.checked });
    applyFilters();
  });
  const head = el('div', { class: 'run-head', role: 'row' });
  const list = el('ul', { class: 'run-list', 'aria-labelledby': headingId });
  const spacer = el('div', { class: 'run-spacer' }, list);
  // One scroll box for both axes: the header sticks to its top while the rows scroll.
  const scroller = el('div', { class: 'run-table', tabindex: '-1' }, head, spacer);
  let frame = 0;
  scroller.addEventListener('scroll', () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; renderRows(); });
  });
  setChildren(
    container,
    el('h2', { id: headingId }, 'Runs ', count),
    filter.element,
    el('div', { class: 'filter' }, el('label', { for: whereId }, 'Filter by values (config, hparam, metric or run field)'), whereInput, whereError),
    el('details', { class: 'run-columns' }, el('summary', {}, 'Metric columns'), metricsInput),
    buttons,
    el('label', { class: 'toggle', title: 'Hide config and hparam columns whose value is the same in every run listed' }, diffBox, ' Differences only'),
    scroller,
  );
  showWhereError();

  function showWhereError() {
    whereInput.setAttribute('aria-invalid', where.ok ? 'false' : 'true');
    whereError.hidden = where.ok;
    whereError.textContent = where.ok ? '' : where.error;
  }

  function hasColumn(tag) {
    return Boolean(table && (tag in (table.hparams || {}) || tag in (table.metrics || {}) || tag in (table.fields || {})));
  }

  function saveAndNotify() {
    state.set({ off: [...off].filter((r) => rows.has(r) || runs.includes(r)).sort() });
    syncChecks();
    onChange();
  }

  function syncChecks() {
    for (const box of list.querySelectorAll('input[type=checkbox]')) box.checked = !off.has(box.dataset.run);
    let active = 0;
    for (const r of shown) if (!off.has(r)) active += 1;
    const matching = shown.length === runs.length ? '' : ` · ${shown.length} match`;
    count.textContent = `${active} of ${runs.length} shown${matching}`;
  }

  // ---- the table's columns and rows ---------------------------------------------------------
  const GAP = 4;
  function widthOf(c) {
    if (c.id === 'run') return 170;
    return c.kind === 'time' ? 130 : 76;
  }

  function template() {
    if (columns.length === 1) return '20px minmax(0, 1fr)';
    return `20px ${columns.map((c) => `${widthOf(c)}px`).join(' ')}`;
  }

  function renderHead() {
    const key = state.get('rsort');
    const current = key.replace(/^-/, '');
    const desc = key.startsWith('-');
    const cells = columns.map((c) => {
      const sorted = c.id === current;
      const button = el('button', {
        type: 'button',
        class: 'run-sort',
        dataset: { sort: c.id },
        title: `Sort by ${c.label}`,
        'aria-sort': sorted ? (desc ? 'descending' : 'ascending') : 'none',
      }, c.label, sorted ? (desc ? ' ▾' : ' ▴') : '');
      button.addEventListener('click', () => {
        state.set({ rsort: sorted && !desc ? `-${c.id}` : c.id });
        resort();
      });
      return button;
    });
    setChildren(head, el('span', {}), ...cells);
    scroller.style.setProperty('--run-cols', template());
    const width = columns.reduce((w, c) => w + widthOf(c) + GAP, 20 + 4);
    scroller.style.setProperty('--run-width', `${width}px`);
    scroller.classList.toggle('wide', columns.length > 1);
  }

  function row(run) {
    const box = el('input', { type: 'checkbox', 'data-run': run, 'aria-label': `Show ${showName(run)}` });
    box.checked = !off.has(run);
    box.addEventListener('change', () => {
      if (box.checked) off.delete(run);
      else off.add(run);
      saveAndNotify();
    });
    const cells = columns.slice(1).map((c) => {
      const v = cellValue(table, rows, run, c.id);
      const text = cellText(v, c.id);
      return el('span', { class: 'run-cell', title: `${c.label}: ${text}`, dataset: { col: c.id } }, text);
    });
    return el(
      'li',
      { dataset: { run } },
      el(
        'label',
        { title: showName(run) },
        box,
        el('span', { class: 'run-namecell' },
          el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }),
          el('span', { class: 'run-name' }, showName(run))),
        ...cells,
      ),
    );
  }

  function renderRows() {
    spacer.style.height = `${Math.max(1, shown.length) * ROW}px`;
    if (!runs.length) {
      setChildren(list, el('li', { class: 'muted' }, 'No runs yet'));
      list.style.transform = '';
      return;
    }
    const view = scroller.clientHeight || 400;
    const top = Math.max(0, scroller.scrollTop - head.offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + view) / ROW) + OVERSCAN);
    list.style.transform = `translateY(${first * ROW}px)`;
    setChildren(list, shown.slice(first, last).map(row));
  }

  function applyFilters() {
    const f = filter.filter();
    matches = (() => {
      const test = whereTest(where, table, rows);
      return (r) => f.test(r) && test(r);
    })();
    shown = order.filter((r) => matches(r));
    const next = state.get('rdiff') ? differingColumns(allColumns, table, rows, shown) : allColumns;
    if (next.length !== columns.length || next.some((c, i) => c !== columns[i])) {
      columns = next;
      renderHead();
    }
    if (scroller.scrollTop > shown.length * ROW) scroller.scrollTop = 0;
    renderRows();
    syncChecks();
  }

  function resort() {
    order = sortRuns(runs.slice(), state.get('rsort'), table, rows);
    renderHead();
    applyFilters();
  }

  // ---- the table's data ----------------------------------------------------------------------
  let fetching = 0;
  function fetchTable() {
    fetching += 1;
    const mine = fetching;
    const tags = [...new Set([...state.get('rcols'), ...(where.ok ? where.tags : [])])];
    const peaks = getJSON('api/system/peaks').catch(() => null); // the GPU column: an extra
    const workers = getJSON('api/runs/workers').catch(() => null); // world size, restarts: too
    Promise.all([getJSON('api/runs/table', { tag: tags }), fetchRunExtras(), peaks, workers]).then(
      ([answer, extras, gpu, dp]) => {
        if (mine !== fetching) return;
        const body = withExtras(withWorkers(withGpuPeaks(answer, gpu), dp), extras);
        table = body;
        rows = indexTable(body);
        // metrics asked for only by the value filter are not columns
        const cols = new Set(state.get('rcols'));
        allColumns = columnsOf(body).filter((c) => c.kind !== 'metric' || cols.has(c.id.slice(2)));
        columns = allColumns;
        resort();
        const before = shown.length;
        tableListeners.forEach((fn) => fn(body));
        if (where.conditions.length || before !== shown.length) onChange();
      },
      () => {}, // the table is an extra: the list works from run names alone
    );
  }
  const refetchTable = debounce(fetchTable, 150);

  renderHead();
  return {
    setRuns(next) {
      refetchTable(); // metric values move with every data version (ETag: cheap when not)
      const sorted = [...next].sort();
      if (sorted.join('\u0000') === runs.join('\u0000')) return false;
      runs = sorted;
      assignColors(runs);
      resort();
      return true;
    },
    /** Runs that are selected and match the filters, sorted by name. */
    active() {
      return runs.filter((r) => !off.has(r) && matches(r));
    },
    all: () => runs.slice(),
    /** The last /api/runs/table answer (hparams and metrics per run), or null. */
    table: () => table,
    /** Call `fn(table)` whenever a new table arrives. */
    onTable(fn) {
      tableListeners.push(fn);
      return () => tableListeners.splice(tableListeners.indexOf(fn), 1);
    },
  };
}
