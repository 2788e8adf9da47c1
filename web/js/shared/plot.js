// Plotly glue shared by every chart: theme colors from CSS, safe text, config.
/* global Plotly */
import { showName } from './format.js';

/** Plotly's text fields understand a few HTML-like tags; escape names so they show verbatim
 *  (hidden and bidi control characters as visible escapes, see ``showName``). */
export function plotlyText(text) {
  return showName(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Colors of the current theme, read from the CSS custom properties. */
export function themeColors() {
  const css = getComputedStyle(document.documentElement);
  const v = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
  return {
    fg: v('--fg', '#222'),
    muted: v('--muted', '#666'),
    grid: v('--grid', '#e5e5e5'),
    hoverBg: v('--bg-elev', '#fff'),
  };
}

/** A layout with the theme applied; callers merge their axes in. */
export function baseLayout(extra = {}) {
  const c = themeColors();
  return {
    margin: { l: 56, r: 12, t: 8, b: 40 },
    paper_bgcolor: 'rgba(0,0,0,0)',
    plot_bgcolor: 'rgba(0,0,0,0)',
    font: { color: c.fg, size: 11 },
    hoverlabel: { bgcolor: c.hoverBg, font: { color: c.fg }, namelength: -1 },
    showlegend: false,
    ...extra,
  };
}

/** An axis styled for the theme. */
export function axis(extra = {}) {
  const c = themeColors();
  return { gridcolor: c.grid, zerolinecolor: c.grid, linecolor: c.grid, automargin: true, ...extra };
}

export const PLOT_CONFIG = {
  responsive: true,
  displaylogo: false,
  showLink: false,
  showSendToCloud: false,
  modeBarButtonsToRemove: ['select2d', 'lasso2d', 'toggleSpikelines'],
};

/** True when plotly.js has loaded. */
export function plotlyReady() {
  return typeof Plotly !== 'undefined';
}

let loading = null;
/**
 * Load plotly.js once, on demand. It is 4.8 MB of script that takes about a second to
 * evaluate on a slow machine, so views that draw no chart (images, audio, text) paint
 * without waiting for it; index.html only preloads the bytes.
 */
export function loadPlotly() {
  if (plotlyReady()) return Promise.resolve();
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = 'static/vendor/plotly.min.js';
      script.onload = () => resolve();
      script.onerror = () => {
        loading = null;
        reject(new Error('plotly.js failed to load.'));
      };
      document.head.append(script);
    });
  }
  return loading;
}

/** Call `fn` when the system switches between light and dark. */
export function onThemeChange(fn) {
  const mq = window.matchMedia('(prefers-color-scheme: dark)');
  mq.addEventListener('change', fn);
  return () => mq.removeEventListener('change', fn);
}

/**
 * Epoch milliseconds of a value of a plotly date axis: plotly writes ranges as
 * "YYYY-MM-DD HH:MM:SS.ssss" in the page's local time (it draws a JS Date by its local
 * clock), and numbers (from a script's relayout) as milliseconds of that local clock read
 * as UTC. NaN when it is neither.
 */
export function dateAxisMs(value) {
  if (typeof value === 'number') {
    const d = new Date(value);
    return new Date(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(),
      d.getUTCMinutes(), d.getUTCSeconds()).getTime() + (value - Math.floor(value / 1000) * 1000);
  }
  const m = /^(-?\d+)-(\d\d?)(?:-(\d\d?))?(?:[ T](\d\d?)(?::(\d\d?)(?::(\d\d?)(\.\d+)?)?)?)?$/.exec(String(value).trim());
  if (!m) return NaN;
  const [, y, mo, d, h, mi, sec, frac] = m;
  const base = new Date(Number(y), Number(mo) - 1, Number(d || 1), Number(h || 0),
    Number(mi || 0), Number(sec || 0));
  base.setFullYear(Number(y)); // years 0..99 are not 1900..1999
  return base.getTime() + (frac ? Number(frac) * 1000 : 0);
}

/**
 * Call `fn({start, end})` when the user zooms or pans `plot`'s x axis, and `fn(null)` when
 * the view is reset (double-click, autoscale): charts refetch the visible window at screen
 * resolution. On a date axis `start`/`end` are epoch milliseconds. Attached once per plot
 * div, whatever the number of redraws.
 */
export function onXZoom(plot, fn) {
  plot.vdlOnXZoom = fn; // the latest callback wins
  if (plot.vdlZoomHooked) return;
  plot.vdlZoomHooked = true;
  plot.on('plotly_relayout', (event) => {
    if (!event) return;
    const r0 = event['xaxis.range[0]'] ?? (event['xaxis.range'] || [])[0];
    const r1 = event['xaxis.range[1]'] ?? (event['xaxis.range'] || [])[1];
    if (r0 !== undefined && r1 !== undefined) {
      const date = plot.layout && plot.layout.xaxis && plot.layout.xaxis.type === 'date';
      const value = date ? dateAxisMs : Number;
      plot.vdlOnXZoom({ start: value(r0), end: value(r1) });
    } else if (event['xaxis.autorange'] === true) {
      plot.vdlOnXZoom(null);
    }
  });
}
