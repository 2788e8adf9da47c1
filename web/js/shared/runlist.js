// The run list in the sidebar: a color per run, a regex filter, select all / none.
// Selection is stored in the URL as the set of runs switched off ("off"), so runs that appear
// later are shown by default and a shared link still reproduces the view.
import { el, setChildren, uid } from './dom.js';
import * as state from './state.js';
import { assignColors, colorOf } from './colors.js';
import { createFilterInput } from './filterinput.js';
import { showName } from './format.js';

state.declare('off', []);
state.declare('runFilter', '');

/** createRunList(container, onChange) -> {setRuns(runs), active(), all()} */
export function createRunList(container, onChange) {
  let runs = [];
  let off = new Set(state.get('off'));
  const headingId = uid('runs');
  const count = el('span', { class: 'count', 'aria-live': 'polite' });
  const list = el('ul', { class: 'run-list', 'aria-labelledby': headingId });
  const filter = createFilterInput({
    label: 'Filter runs (regex)',
    placeholder: 'e.g. lr=0\\.1|baseline',
    value: state.get('runFilter'),
    name: 'run-filter',
    onChange: (text) => {
      state.set({ runFilter: text });
      render();
      onChange();
    },
  });
  const bulk = (on) => () => {
    const f = filter.filter();
    runs.filter((r) => f.test(r)).forEach((r) => (on ? off.delete(r) : off.add(r)));
    saveAndNotify();
  };
  const buttons = el(
    'div',
    { class: 'button-row' },
    el('button', { type: 'button', onclick: bulk(true) }, 'Select all'),
    el('button', { type: 'button', onclick: bulk(false) }, 'Select none'),
  );
  setChildren(
    container,
    el('h2', { id: headingId }, 'Runs ', count),
    filter.element,
    buttons,
    list,
  );

  function saveAndNotify() {
    state.set({ off: [...off].filter((r) => runs.includes(r)).sort() });
    syncChecks();
    onChange();
  }

  // Update boxes in place (keeps keyboard focus where it was).
  function syncChecks() {
    for (const box of list.querySelectorAll('input[type=checkbox]')) {
      box.checked = !off.has(box.dataset.run);
    }
    const f = filter.filter();
    const shown = runs.filter((r) => f.test(r));
    const active = shown.filter((r) => !off.has(r)).length;
    count.textContent = `${active} of ${runs.length} shown`;
  }

  function row(run) {
    const box = el('input', { type: 'checkbox', 'data-run': run });
    box.checked = !off.has(run);
    box.addEventListener('change', () => {
      if (box.checked) off.delete(run);
      else off.add(run);
      saveAndNotify();
    });
    return el(
      'li',
      {},
      el(
        'label',
        { title: showName(run) },
        box,
        el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }),
        el('span', { class: 'run-name' }, showName(run)),
      ),
    );
  }

  function render() {
    const f = filter.filter();
    const shown = runs.filter((r) => f.test(r));
    setChildren(list, shown.map(row));
    if (!runs.length) list.append(el('li', { class: 'muted' }, 'No runs yet'));
    syncChecks();
  }

  return {
    setRuns(next) {
      const sorted = [...next].sort();
      if (sorted.join('\u0000') === runs.join('\u0000')) return false;
      runs = sorted;
      assignColors(runs);
      render();
      return true;
    },
    /** Runs that are selected and match the filter, sorted. */
    active() {
      const f = filter.filter();
      return runs.filter((r) => !off.has(r) && f.test(r));
    },
    all: () => runs.slice(),
  };
}
