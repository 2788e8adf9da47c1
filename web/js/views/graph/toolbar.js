// The graph view's controls: the toolbar (model, upload, find, fit, expand/collapse, the
// drawing options kept in the URL, export) and the sidebar's legend of op categories.
import * as state from '../../shared/state.js';
import { el } from '../../shared/dom.js';
import { colorsOf } from './colors.js';
import { viewOptions } from './viewfetch.js';

export { viewOptions };

const CATEGORIES = ['layer', 'activation', 'pool', 'normalization', 'math', 'shape', 'control', 'constant', 'quantization', 'group'];

/**
 * The toolbar. on: {selectModel(id), upload(file input), fit(), actualSize(), expand(spec),
 * reload(opts), exportSVG(), exportPNG()}; find: the find box's element. Returns
 * {element, modelSelect, fileInput, status}.
 */
export function buildToolbar(on, find) {
  const button = (label, onclick, attrs = {}) => el('button', { type: 'button', class: 'btn', onclick, ...attrs }, label);
  const modelSelect = el('select', { id: 'graph-model', 'aria-label': 'Model', onchange: () => on.selectModel(modelSelect.value) });
  const fileInput = el('input', { type: 'file', accept: '.onnx,application/octet-stream', hidden: true, id: 'graph-file', onchange: () => on.upload(fileInput) });
  const check = (key, label, id) => {
    const input = el('input', { type: 'checkbox', id });
    input.checked = state.get(key);
    input.addEventListener('change', () => {
      state.set({ [key]: input.checked });
      on.reload();
    });
    return el('label', { class: 'inline', for: id }, input, ` ${label}`);
  };
  const horizontal = el('input', { type: 'checkbox', id: 'graph-horizontal' });
  horizontal.checked = state.get('graph_dir') === 'LR';
  horizontal.addEventListener('change', () => {
    state.set({ graph_dir: horizontal.checked ? 'LR' : 'TB' });
    on.reload({ fit: true });
  });
  const status = el('span', { class: 'graph-status', role: 'status', 'aria-live': 'polite' });
  const element = el(
    'div',
    { class: 'graph-toolbar', role: 'toolbar', 'aria-label': 'Graph tools' },
    el('label', { for: 'graph-model', class: 'inline' }, 'Model '), modelSelect,
    button('Upload…', () => fileInput.click(), { id: 'graph-upload', title: 'Open an .onnx file' }), fileInput,
    find,
    button('Fit', () => on.fit(), { id: 'graph-fit', title: 'Fit to screen (0)' }),
    button('100%', () => on.actualSize(), { id: 'graph-actual', title: 'Actual size (1)' }),
    button('Expand all', () => on.expand('all'), { id: 'graph-expand-all' }),
    button('Collapse all', () => on.expand('none'), { id: 'graph-collapse-all' }),
    check('graph_attrs', 'Attributes', 'graph-attrs'),
    check('graph_inits', 'Weights', 'graph-inits'),
    el('label', { class: 'inline', for: 'graph-horizontal' }, horizontal, ' Horizontal'),
    button('Export SVG', () => on.exportSVG(), { id: 'graph-export-svg' }),
    button('Export PNG', () => on.exportPNG(), { id: 'graph-export-png' }),
    status,
  );
  return { element, modelSelect, fileInput, status };
}

/** The legend of op categories for the sidebar. */
export function legend() {
  // swatch colors from colors.js, the one table the drawing and the export use too
  return el('ul', { class: 'graph-legend plain' }, CATEGORIES.map((c) => el('li', {}, el('span', { class: `swatch cat-${c}`, style: { background: colorsOf(c)[0] } }), ` ${c}`)));
}
