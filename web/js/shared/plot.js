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
 * Call `fn({start, end})` when the user zooms or pans `plot`'s x axis, and `fn(null)` when
 * the view is reset (double-click, autoscale): charts refetch the visible window at screen
 * resolution. Attached once per plot div, whatever the number of redraws.
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
      plot.vdlOnXZoom({ start: Number(r0), end: Number(r1) });
    } else if (event['xaxis.autorange'] === true) {
      plot.vdlOnXZoom(null);
    }
  });
}
