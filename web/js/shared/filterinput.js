// A labelled regex filter box that marks an invalid pattern instead of failing.
import { el, uid, debounce } from './dom.js';
import { compileFilter } from './regex.js';

/**
 * createFilterInput({label, placeholder, value, onChange}) -> {element, filter(), setValue(v)}
 * onChange(text, compiledFilter) fires (debounced) as the user types.
 */
export function createFilterInput({ label, placeholder = '', value = '', onChange, name }) {
  const id = uid('filter');
  const errId = `${id}-error`;
  const input = el('input', {
    id,
    type: 'search',
    name,
    placeholder,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': errId,
  });
  input.value = value;
  const error = el('p', { id: errId, class: 'filter-error', role: 'alert', hidden: true });
  const element = el('div', { class: 'filter' }, el('label', { for: id }, label), input, error);
  let compiled = compileFilter(value);
  const show = () => {
    compiled.onRefuse = show; // a filter that runs too long turns off and says so
    input.setAttribute('aria-invalid', compiled.ok ? 'false' : 'true');
    error.hidden = compiled.ok;
    if (compiled.ok) error.textContent = '';
    else error.textContent = compiled.refused ? compiled.error : `Invalid regular expression: ${compiled.error}`;
  };
  const fire = debounce(() => onChange && onChange(input.value, compiled), 120);
  input.addEventListener('input', () => {
    compiled = compileFilter(input.value);
    show();
    fire();
  });
  show();
  return {
    element,
    input,
    filter: () => compiled,
    setValue(v) {
      input.value = v;
      compiled = compileFilter(v);
      show();
    },
  };
}
