// A step slider over EVERY recorded step of a series (not a sample of ten): a range input over
// the index of the step, previous/next buttons, and a readout of the step and its wall time.
// The range input gives keyboard support for free (arrows, Page Up/Down, Home/End); the
// buttons are there for pointer users who want one step exactly.
import { el, uid } from './dom.js';
import { fmtWall } from './format.js';

/**
 * createStepSlider({label, onChange}) -> slider
 *   slider.element          the DOM to insert
 *   slider.setEntries(steps, walls)  new data; keeps the position (or follows the newest)
 *   slider.index / slider.step()     the current position
 *   slider.setStep(step)    jump to the last entry at or before `step` (sync across cards)
 * onChange(index, {user}) fires on every change; `user` is true when the user moved it.
 */
export function createStepSlider({ label, onChange }) {
  const id = uid('step');
  const input = el('input', { id, type: 'range', min: '0', max: '0', step: '1', value: '0', class: 'step-range' });
  input.setAttribute('aria-label', `${label}: step`);
  const prev = el('button', { type: 'button', class: 'btn step-btn', 'aria-label': `${label}: previous step` }, '‹');
  const next = el('button', { type: 'button', class: 'btn step-btn', 'aria-label': `${label}: next step` }, '›');
  const stepText = el('span', { class: 'step-value' });
  const wallText = el('span', { class: 'step-wall' });
  const posText = el('span', { class: 'step-pos' });
  const element = el(
    'div',
    { class: 'step-slider' },
    el('div', { class: 'slider-row' }, prev, input, next),
    el('div', { class: 'step-readout' }, stepText, wallText, posText),
  );
  let steps = [];
  let walls = [];

  const slider = {
    element,
    input,
    index: 0,
    step: () => (steps.length ? steps[slider.index] : null),
    wall: () => (walls.length ? walls[slider.index] : null),
    count: () => steps.length,
    setEntries(newSteps, newWalls) {
      const wasLast = slider.index >= steps.length - 1;
      const oldStep = slider.step();
      steps = newSteps;
      walls = newWalls || [];
      input.max = String(Math.max(0, steps.length - 1));
      // follow the newest step when the user was at the end (live training), else stay put
      const i = wasLast || oldStep === null ? steps.length - 1 : indexAtOrBefore(steps, oldStep);
      setIndex(i, false, true);
    },
    setStep(step) {
      if (steps.length) setIndex(indexAtOrBefore(steps, step), false);
    },
    setIndex: (i) => setIndex(i, false),
  };

  function setIndex(i, user, force = false) {
    const clamped = Math.max(0, Math.min(steps.length - 1, i));
    const changed = clamped !== slider.index;
    slider.index = Math.max(0, clamped);
    input.value = String(slider.index);
    render();
    if (changed || force) onChange(slider.index, { user });
  }

  function render() {
    const n = steps.length;
    const step = slider.step();
    stepText.textContent = n ? `step ${step}` : 'no steps';
    wallText.textContent = n ? fmtWall(walls[slider.index]) : '';
    posText.textContent = n ? `${slider.index + 1} of ${n}` : '';
    input.setAttribute('aria-valuetext', n ? `step ${step} (${slider.index + 1} of ${n})` : 'no steps');
    input.disabled = n < 2;
    prev.disabled = slider.index <= 0;
    next.disabled = slider.index >= n - 1;
    element.dataset.step = n ? String(step) : '';
  }

  input.addEventListener('input', () => setIndex(Number(input.value), true));
  prev.addEventListener('click', () => setIndex(slider.index - 1, true));
  next.addEventListener('click', () => setIndex(slider.index + 1, true));
  render();
  return slider;
}

/** Index of the last step <= `step` (steps ascending in time, usually in step too). */
export function indexAtOrBefore(steps, step) {
  let best = 0;
  let bestStep = -Infinity;
  for (let i = 0; i < steps.length; i += 1) {
    // a resumed run may log a step twice; the later entry wins, as on the server
    if (steps[i] <= step && steps[i] >= bestStep) {
      best = i;
      bestStep = steps[i];
    }
  }
  return bestStep === -Infinity ? 0 : best;
}
