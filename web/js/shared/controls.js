// Settings-panel controls bound to a key of the URL state (state.js): each shows the key's
// value, writes the new value back when the user changes it, then calls `onChange`.
import * as state from './state.js';
import { el, uid } from './dom.js';

/** A labelled checkbox for a boolean key. */
export function stateCheckbox(key, label, onChange, { name = key } = {}) {
  const input = el('input', { type: 'checkbox', name });
  input.checked = state.get(key);
  input.addEventListener('change', () => {
    state.set({ [key]: input.checked });
    onChange();
  });
  return el('label', { class: 'block' }, input, ` ${label}`);
}

/**
 * A fieldset of radio buttons, one per [value, label] option; values may be numbers (the
 * state keeps the type of the key's default).
 */
export function stateRadios(key, legend, options, onChange, { name = key, inline = false } = {}) {
  const current = String(state.get(key));
  const radios = options.map(([value, label]) => {
    const input = el('input', { type: 'radio', name, value: String(value) });
    input.checked = current === String(value);
    input.addEventListener('change', () => {
      state.set({ [key]: value });
      onChange();
    });
    return el('label', { class: inline ? 'inline' : 'block' }, input, ` ${label}`);
  });
  return el('fieldset', { class: 'field' }, el('legend', {}, legend), ...radios);
}

/** A labelled select over [value, label] options; a value not among them shows the first. */
export function stateSelect(key, label, options, onChange, { name = key } = {}) {
  const id = uid(key);
  const select = el('select', { id, name }, ...options.map(([value, text]) => el('option', { value }, text)));
  select.value = validChoice(key, options);
  select.addEventListener('change', () => {
    state.set({ [key]: select.value });
    onChange();
  });
  return el('div', { class: 'field' }, el('label', { for: id }, label), select);
}

/** The key's value when it is one of the [value, label] options, else the first option's. */
export function validChoice(key, options) {
  const value = state.get(key);
  return options.some(([v]) => v === value) ? value : options[0][0];
}
