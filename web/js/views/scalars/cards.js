// The scalars view's DOM outside the plots: a chart's card (its buttons, runs menu, note and
// download links), and the toolbar's "New chart" form and "Export layout" dialog. What is
// kept in the URL is the view's: these take values and report through callbacks.
/* global Plotly */
import { apiURL } from '../../shared/api.js';
import { colorOf } from '../../shared/colors.js';
import { showName } from '../../shared/format.js';
import { el, setChildren, uid, fmtInt } from '../../shared/dom.js';
import { compilePatterns } from './layouts.js';
import { requestComparison } from '../../shared/comparelink.js';

/**
 * The card of chart `spec`, empty until drawn. `pinned`: whether it is pinned (or a pinned
 * copy); on: {pin(), remove(), runsMenu(menu)} for its buttons.
 */
export function createCard(spec, pinned, on) {
  const title = spec.title;
  const csv = el('a', { class: 'btn', download: '', 'data-format': 'csv' }, 'CSV');
  const json = el('a', { class: 'btn', download: '', 'data-format': 'json' }, 'JSON');
  csv.setAttribute('aria-label', `Download CSV of ${title}`);
  json.setAttribute('aria-label', `Download JSON of ${title}`);
  const pin = el('button', { type: 'button', class: 'btn', name: 'pin', 'aria-pressed': String(pinned) }, pinned ? 'Unpin' : 'Pin');
  pin.setAttribute('aria-label', `${pinned ? 'Unpin' : 'Pin'} chart ${title}`);
  pin.addEventListener('click', () => on.pin());
  const expand = el('button', { type: 'button', class: 'btn', 'aria-pressed': 'false' }, 'Expand');
  expand.setAttribute('aria-label', `Expand chart ${title}`);
  const runsMenu = el('details', { class: 'card-runs' }, el('summary', { class: 'btn' }, 'Runs'), el('div', { class: 'card-runs-list' }));
  runsMenu.addEventListener('toggle', () => {
    if (runsMenu.open) on.runsMenu(runsMenu);
  });
  const actions = [csv, json, runsMenu, pin, expand];
  if (spec.removable) {
    const remove = el('button', { type: 'button', class: 'btn', name: 'remove' }, 'Remove');
    remove.setAttribute('aria-label', `Remove chart ${title}`);
    remove.addEventListener('click', () => on.remove());
    actions.push(remove);
  }
  const plot = el('div', { class: 'plot', role: 'img' });
  plot.setAttribute('aria-label', `Chart of ${title}`);
  const dataset = { state: 'idle', chart: title, kind: spec.kind };
  if (spec.kind === 'tag') dataset.tag = spec.tags[0];
  if (spec.pinned !== undefined) dataset.pinned = '1';
  const card = el(
    'article',
    { class: `card${spec.kind === 'tag' ? '' : ' combined'}`, dataset },
    el(
      'header',
      { class: 'card-head' },
      el('h3', { class: 'card-title', title: showName(title) }, showName(title)),
      el('div', { class: 'card-actions' }, ...actions),
    ),
    plot,
    el('p', { class: 'card-note' }),
  );
  expand.addEventListener('click', () => {
    const wide = card.classList.toggle('wide');
    expand.setAttribute('aria-pressed', String(wide));
    expand.textContent = wide ? 'Shrink' : 'Expand';
    if (plot.data) Plotly.Plots.resize(plot);
  });
  return card;
}

/** Show on `card`'s pin button whether its chart is pinned. */
export function showPinned(card, on) {
  const button = card.querySelector('button[name=pin]');
  button.setAttribute('aria-pressed', String(on));
  button.textContent = on ? 'Unpin' : 'Pin';
  button.setAttribute('aria-label', `${on ? 'Unpin' : 'Pin'} chart ${card.dataset.chart}`);
}

/** Fill a card's runs menu: a box per active run (checked: in `subset`, or every run when
 *  there is none); onSubset(runs | null) with null for "every run". */
export function fillRunsMenu(menu, active, subset, onSubset) {
  const list = menu.querySelector('.card-runs-list');
  const boxes = active.map((run) => {
    const input = el('input', { type: 'checkbox', value: run });
    input.checked = !subset || subset.includes(run);
    input.addEventListener('change', () => {
      const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
      onSubset(chosen.length === active.length ? null : chosen);
    });
    return input;
  });
  const all = el('button', { type: 'button', class: 'btn' }, 'Every run');
  all.addEventListener('click', () => {
    boxes.forEach((b) => {
      b.checked = true;
    });
    onSubset(null);
  });
  const compare = el('button', { type: 'button', class: 'btn', name: 'compare-chart-runs', title: 'Compare the checked runs (2 to 100)' }, 'Compare');
  compare.addEventListener('click', () => requestComparison(boxes.filter((b) => b.checked).map((b) => b.value)));
  setChildren(
    list,
    ...boxes.map((b) => el('label', { class: 'block' }, b, ' ', el('span', { class: 'swatch', style: { background: colorOf(b.value) } }), ` ${showName(b.value)}`)),
    all,
    compare,
  );
}

/** The card's note (runs, lines, points, non-finite values) and its download links. */
export function annotateCard(card, spec, lines, bands, nonFinite, error) {
  const runs = [...new Set(lines.map((l) => l.run))];
  const shown = lines.reduce((n, r) => n + r.series.values.length, 0);
  const total = lines.reduce((n, r) => n + r.series.total, 0);
  const what = spec.kind === 'tag' ? '' : ` · ${lines.length} line${lines.length === 1 ? '' : 's'}`;
  let note = lines.length
    ? `${runs.length} run${runs.length === 1 ? '' : 's'}${what} · ${fmtInt(shown)} of ${fmtInt(total)} points`
    : `No selected run has ${spec.kind === 'tag' ? 'this tag' : 'a tag of this chart'}.`;
  if (error) note = lines.length || bands.length ? `${error} · ${note}` : error;
  if (lines.some((r) => r.series.downsampled)) note += ' (min/max per bucket)';
  if (nonFinite.length) {
    note += ` · non-finite values: ${nonFinite.map((n) => `${n.run} (${n.count})`).join(', ')}`;
  }
  card.querySelector('.card-note').textContent = note;
  card.dataset.state = lines.length || bands.length ? 'ready' : 'empty';
  card.dataset.traces = String(card.querySelector('.plot').data.length);
  const tags = [...new Set([...lines.map((l) => l.tag), ...bands.flatMap((b) => [b.tags.lower, b.tags.upper])])];
  const params = { tag: tags, run: runs.length ? runs : [...new Set(bands.map((b) => b.run))] };
  const ranks = new Set(lines.map((l) => l.rank).filter((r) => r)); // the rank drawn, if chosen
  if (ranks.size === 1) params.rank = [...ranks][0];
  for (const link of card.querySelectorAll('a[data-format]')) {
    const format = link.dataset.format;
    link.href = apiURL('api/scalars/download', { ...params, format });
    link.toggleAttribute('aria-disabled', !tags.length);
  }
}

/** The note of a grouped chart. */
export function groupNote(groups, body, error) {
  if (error) return error;
  const runs = groups.reduce((n, g) => n + g.members.length, 0);
  let note = `${groups.length} group${groups.length === 1 ? '' : 's'} of ${fmtInt(runs)} run${runs === 1 ? '' : 's'} · ${body.stat}, ${body.band} band, smoothed before grouping`;
  if (groups.some((g) => g.interpolated)) note += ' · runs on other step grids interpolated';
  return note;
}

/** "New chart": a chart of every tag matching any of a few regexes; onAdd(patterns). */
export function newChartForm(onAdd) {
  const id = uid('new-chart');
  const input = el('input', {
    id,
    type: 'text',
    name: 'new-chart',
    placeholder: 'e.g. ^loss/ , acc$',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const error = el('span', { class: 'new-chart-error', role: 'alert', hidden: true });
  const form = el(
    'form',
    { class: 'new-chart' },
    el('label', { for: id }, 'New chart from tag regexes (comma-separated)'),
    el('div', { class: 'slider-row' }, input, el('button', { type: 'submit', class: 'btn' }, 'Add chart')),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const patterns = input.value.split(',').map((p) => p.trim()).filter(Boolean);
    const compiled = compilePatterns(patterns, { counts: false }); // drawn by the worker
    error.hidden = !compiled.error && patterns.length > 0;
    error.textContent = compiled.error || (patterns.length ? '' : 'Type at least one regex.');
    if (compiled.error || !patterns.length) return;
    input.value = '';
    onAdd(patterns);
  });
  return form;
}

/** "Export layout": a button and the dialog it opens with `text()` (a layout dictionary). */
export function exportLayoutButton(text) {
  const area = el('textarea', { class: 'export-text', readonly: true, rows: '12', spellcheck: 'false', 'aria-label': 'Layout dictionary' });
  const copy = el('button', { type: 'button', class: 'btn' }, 'Copy');
  const close = el('button', { type: 'button', class: 'btn' }, 'Close');
  const status = el('span', { class: 'count', 'aria-live': 'polite' });
  const dialog = el(
    'dialog',
    { class: 'lightbox export-dialog', 'aria-label': 'Export layout' },
    el('h3', {}, 'Layout for add_custom_scalars'),
    area,
    el('div', { class: 'card-actions' }, copy, close, status),
  );
  close.addEventListener('click', () => dialog.close());
  copy.addEventListener('click', async () => {
    area.select();
    try {
      await navigator.clipboard.writeText(area.value);
      status.textContent = 'Copied.';
    } catch (_) {
      status.textContent = 'Press Ctrl+C to copy the selected text.';
    }
  });
  const button = el('button', { type: 'button', class: 'btn', name: 'export-layout' }, 'Export layout');
  button.addEventListener('click', () => {
    area.value = text();
    status.textContent = '';
    if (!dialog.isConnected) document.body.append(dialog);
    dialog.showModal();
    area.select();
  });
  return { button, dialog };
}
