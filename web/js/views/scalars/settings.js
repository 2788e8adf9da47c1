// The scalars view's sidebar: smoothing, x axis, log-y, outliers, tooltip order and the
// grouping of runs, all kept in the URL; and the drawing options they make.
import * as state from '../../shared/state.js';
import { el, setChildren, uid } from '../../shared/dom.js';
import { stateCheckbox, stateRadios, stateSelect, validChoice } from '../../shared/controls.js';
import { GROUP_MODES, GROUP_STATS, GROUP_BANDS, grouping, setGrouping } from './groups.js';
import { smoothingControls, smoothingQuery } from './smoothmodes.js';

state.declare('smoothing', 0.6);
state.declare('x', 'step');
state.declare('logy', false);
state.declare('outliers', false);
state.declare('tips', 'trace');

const X_MODES = [
  ['step', 'Step'],
  ['relative', 'Relative'],
  ['wall', 'Wall'],
];

// The tooltip's order: plotly's layout.hoversort values (TensorBoard offers the same choice).
const TIP_ORDERS = [
  ['trace', 'Run order'],
  ['value descending', 'Highest value first'],
  ['value ascending', 'Lowest value first'],
];

/** The x axis chosen: 'step' | 'relative' | 'wall'. */
export function xMode() {
  return validChoice('x', X_MODES);
}

/** The drawing options the settings say. */
export function chartOptions() {
  return {
    smoothing: state.get('smoothing'),
    smoothQuery: smoothingQuery(), // the mode, running points and envelope (smoothmodes.js)
    xMode: xMode(),
    logY: state.get('logy'),
    ignoreOutliers: state.get('outliers'),
    tipOrder: validChoice('tips', TIP_ORDERS),
  };
}

/** Fill `container` with the settings; `redraw()` after each change. */
export function buildSettings(container, redraw) {
  const smoothingId = uid('smoothing');
  const slider = el('input', {
    id: smoothingId,
    type: 'range',
    min: '0',
    max: '0.999',
    step: '0.001',
    name: 'smoothing',
  });
  const number = el('input', {
    type: 'number',
    min: '0',
    max: '0.999',
    step: '0.001',
    'aria-label': 'Smoothing value',
    class: 'smoothing-number',
  });
  slider.value = number.value = String(state.get('smoothing'));
  const setSmoothing = (raw) => {
    const v = Math.min(0.999, Math.max(0, Number(raw) || 0));
    slider.value = String(v);
    if (document.activeElement !== number) number.value = String(v);
    state.set({ smoothing: v });
    redraw();
  };
  slider.addEventListener('input', () => setSmoothing(slider.value));
  number.addEventListener('change', () => setSmoothing(number.value));

  setChildren(
    container,
    el('h2', {}, 'Scalars'),
    el(
      'div',
      { class: 'field' },
      el('label', { for: smoothingId }, 'Smoothing'),
      el('div', { class: 'slider-row' }, slider, number),
    ),
    smoothingControls(redraw),
    stateRadios('x', 'Horizontal axis', X_MODES, redraw, { name: 'x-axis', inline: true }),
    stateCheckbox('logy', 'Log-scale y-axis', redraw),
    stateCheckbox('outliers', 'Ignore outliers in chart scaling', redraw),
    stateSelect('tips', 'Tooltip order', TIP_ORDERS, redraw, { name: 'tooltip-order' }),
    groupSettings(redraw),
  );
}

/** Group runs: by a regex capture on the name or by hparams; centre line and band. */
function groupSettings(redraw) {
  const g = grouping();
  const modeId = uid('group-mode');
  const mode = el('select', { id: modeId, name: 'group-mode', 'aria-label': 'Group runs by' },
    ...GROUP_MODES.map(([id, label]) => el('option', { value: id }, label)));
  mode.value = g ? g.mode : '';
  const text = el('input', {
    type: 'text',
    name: 'group-by',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-label': 'Group by (regex with capture groups, or hparam names)',
  });
  text.value = g ? g.text : '';
  const error = el('p', { class: 'filter-error', role: 'alert', hidden: true });
  const placeholder = () => {
    text.placeholder = mode.value === 'hp' ? 'e.g. lr, optimizer' : 'e.g. ^(.*)_seed\\d+$';
    text.disabled = !mode.value;
  };
  const apply = () => {
    placeholder();
    if (mode.value === 're' && text.value.trim()) {
      try {
        new RegExp(text.value.trim()); // eslint-disable-line no-new
      } catch (err) {
        error.hidden = false;
        error.textContent = `Invalid regular expression: ${err.message}`;
        return;
      }
    }
    error.hidden = true;
    setGrouping(mode.value, text.value);
    redraw();
  };
  placeholder();
  mode.addEventListener('change', apply);
  text.addEventListener('change', apply);
  return el(
    'fieldset',
    { class: 'field group-settings' },
    el('legend', {}, 'Group runs'),
    mode,
    text,
    error,
    stateSelect('gstat', 'Group line', GROUP_STATS, redraw, { name: 'group-stat' }),
    stateSelect('gband', 'Group band', GROUP_BANDS, redraw, { name: 'group-band' }),
  );
}
