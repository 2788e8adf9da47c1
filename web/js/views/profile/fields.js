// The profile dashboard's pickers: a labelled <select> and filling one, keeping its value
// when it is still on offer.
import { el, setChildren, uid } from '../../shared/dom.js';

/** {node, field}: a <select> named `name` and the labelled field around it. */
export function select(label, name, onChange) {
  const id = uid('prof');
  const node = el('select', { id, name, onchange: () => onChange(node.value) });
  return { node, field: el('div', { class: 'prof-field' }, el('label', { for: id }, label), node) };
}

/** Offer `options` ([value, text]) in `sel`, keeping `value` when offered; the value chosen. */
export function fillSelect(sel, options, value) {
  setChildren(sel, options.map(([v, text]) => el('option', { value: v }, text)));
  if (options.some(([v]) => v === value)) sel.value = value;
  return sel.value;
}
