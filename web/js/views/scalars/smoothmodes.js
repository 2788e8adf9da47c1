// The smoothing mode of the scalar charts, kept in the URL beside the smoothing slider:
// `smode` (ema | time_ema | running), `savg` (the running average's points) and `envelope`
// (the min/max band of the raw points). The server smooths every window (full or zoomed)
// with these parameters (see visualdl/series/smoothing.py); the functions here smooth the
// points already held meanwhile, so a moved slider redraws at once.
import * as state from '../../shared/state.js';
import { el, uid } from '../../shared/dom.js';
import { stateCheckbox, stateSelect, validChoice } from '../../shared/controls.js';

state.declare('smode', 'ema');
state.declare('savg', 10);
state.declare('envelope', false);

export const SMOOTH_MODES = [
  ['ema', 'EMA'],
  ['time_ema', 'Time-weighted EMA'],
  ['running', 'Running average'],
];
const MAX_POINTS = 1000000;

/** The mode chosen: 'ema' | 'time_ema' | 'running'. */
export function smoothMode() {
  return validChoice('smode', SMOOTH_MODES);
}

function runningPoints() {
  const n = Math.round(state.get('savg'));
  return Math.min(MAX_POINTS, Math.max(1, Number.isFinite(n) ? n : 1));
}

/** The server's smoothing parameters for the settings ({} when nothing is smoothed). */
export function smoothingQuery() {
  const q = {};
  const mode = smoothMode();
  if (mode === 'running') {
    const n = runningPoints();
    if (n > 1) Object.assign(q, { smoothing_mode: 'running', smoothing_points: n });
  } else {
    const w = state.get('smoothing');
    if (w > 0) Object.assign(q, mode === 'ema' ? { smoothing: w } : { smoothing: w, smoothing_mode: mode });
  }
  if (state.get('envelope')) q.envelope = true;
  return q;
}

/** What a series' server smoothing was asked with: a series drawn with other settings is
 *  smoothed here until the server's answer for these arrives. */
export function smoothingKey(query = smoothingQuery()) {
  return JSON.stringify(query);
}

/** The mode select, the running average's points and the envelope checkbox. */
export function smoothingControls(redraw) {
  const id = uid('savg');
  const count = el('input', { id, type: 'number', min: '1', max: String(MAX_POINTS), step: '1', name: 'smoothing-points', class: 'smoothing-points' });
  count.value = String(runningPoints());
  const points = el('div', { class: 'field', hidden: smoothMode() !== 'running' }, el('label', { for: id }, 'Points averaged'), count);
  count.addEventListener('change', () => {
    state.set({ savg: Math.min(MAX_POINTS, Math.max(1, Math.round(Number(count.value)) || 1)) });
    count.value = String(runningPoints());
    redraw();
  });
  const mode = stateSelect('smode', 'Smoothing mode', SMOOTH_MODES, () => {
    points.hidden = smoothMode() !== 'running';
    redraw();
  }, { name: 'smoothing-mode' });
  const band = stateCheckbox('envelope', 'Min/max band of the raw points', redraw, { name: 'envelope' });
  return el('div', { class: 'smoothing-modes' }, mode, points, band);
}

/** Is anything smoothed with these settings? */
export function smoothingActive(query) {
  return query.smoothing > 0 || query.smoothing_points > 1;
}

/** The settings' smoothing of the held points of a series (the server's is of the whole
 *  series: this is what is drawn until it arrives). Non-finite values pass through. */
export function smoothHeld(series, query, ema) {
  const values = series.values;
  if (query.smoothing_mode === 'running') return runningMean(values, query.smoothing_points);
  if (query.smoothing_mode === 'time_ema') return timeEma(series.steps, values, query.smoothing);
  return ema(values, query.smoothing || 0);
}

function runningMean(values, n) {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i += 1) {
    if (!Number.isFinite(values[i])) {
      out[i] = values[i];
      continue;
    }
    let sum = 0;
    let k = 0;
    for (let j = Math.max(0, i - n + 1); j <= i; j += 1) {
      if (Number.isFinite(values[j])) {
        sum += values[j];
        k += 1;
      }
    }
    out[i] = sum / k;
  }
  return out;
}

function timeEma(steps, values, w) {
  const out = new Float64Array(values.length);
  const n = steps.length;
  const span = n > 1 ? steps[n - 1] - steps[0] : 0;
  const unit = span > 0 ? span / (n - 1) : 1;
  let num = 0;
  let den = 0;
  let prev = null;
  for (let i = 0; i < n; i += 1) {
    const v = values[i];
    if (!Number.isFinite(v)) {
      out[i] = v;
      continue;
    }
    const d = prev === null ? 1 : w ** (Math.max(steps[i] - prev, 0) / unit);
    num = num * d + v;
    den = den * d + 1;
    prev = steps[i];
    out[i] = num / den;
  }
  return out;
}
