// Color arithmetic for charts that shade one run's color: translucent bands (distributions,
// scalar margin and group bands), step gradients (histograms). Colors are '#rrggbb' (what
// colors.js hands out). The one place that does this: views import it, never copy it.

function rgb(hex) {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  const n = parseInt(full.slice(0, 6), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** '#rrggbb' plus alpha -> 'rgba(r,g,b,a)'. */
export function withAlpha(hex, alpha) {
  const [r, g, b] = rgb(hex);
  return `rgba(${r},${g},${b},${alpha})`;
}

/** An opaque blend: t=0 gives `hex`, t=1 gives `background`. */
export function mix(hex, background, t) {
  const a = rgb(hex);
  const b = /^#/.test(background) ? rgb(background) : [255, 255, 255];
  const c = a.map((v, i) => Math.round(v + (b[i] - v) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
