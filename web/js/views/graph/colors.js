// Op category -> box colors. Set as attributes (not CSS) so an exported SVG looks the same
// outside the app; chosen to read well on both the light and the dark theme.
export const CATEGORY_COLORS = {
  layer: ['#cfe0fb', '#3465a4'],
  activation: ['#fbd5d2', '#b3443a'],
  pool: ['#d3f0d3', '#3a873a'],
  normalization: ['#e3dafc', '#6a52b3'],
  shape: ['#e9ebef', '#6f7785'],
  control: ['#ffe3a8', '#a86f00'],
  constant: ['#f3ecdc', '#8f7f5a'],
  quantization: ['#d4f1ee', '#2a8278'],
  math: ['#f5f0c6', '#8a7b12'],
  input: ['#ffffff', '#4b5566'],
  output: ['#ffffff', '#4b5566'],
  group: ['#eef2fa', '#5b6f96'],
};

export const TEXT_COLOR = '#1d2330';
export const EDGE_COLOR = '#8a93a6';
export const FRAME_STROKE = '#7d8db0';
export const FRAME_FILL = 'rgba(125,141,176,0.07)';
export const FRAME_TEXT = '#66708a';
export const LABEL_COLOR = '#7a8294';
export const FONT = "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace";

export function colorsOf(category) {
  return CATEGORY_COLORS[category] || CATEGORY_COLORS.math;
}
