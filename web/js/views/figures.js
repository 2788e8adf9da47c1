// The figures dashboard: a card per run × tag with a step slider. Plotly figures (logged as
// their JSON) are drawn interactive; matplotlib figures (logged as PNG) are shown as images.
/* global Plotly */
import { registerView } from '../shared/views.js';
import { getJSON, apiURL } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { baseLayout, axis, PLOT_CONFIG, plotlyReady } from '../shared/plot.js';
import { openLightbox } from '../shared/lightbox.js';
import { el, setChildren } from '../shared/dom.js';

// Trace types that draw on maps fetched from the internet (topojson or map tiles from a CDN):
// the dashboard loads nothing from outside (its CSP blocks it), so they would draw blank.
const MAP_TRACES = new Set([
  'scattergeo', 'choropleth', 'scattermapbox', 'choroplethmapbox', 'densitymapbox',
  'scattermap', 'choroplethmap', 'densitymap',
]);
export const MAP_NOTE = 'Map figures need map files from the internet, which this dashboard does not load.';

/** The map trace types a figure uses (none for an ordinary figure). */
function mapTraces(data) {
  return [...new Set((data || []).map((t) => t && t.type).filter((t) => MAP_TRACES.has(t)))];
}

/** The logged layout wins; ours only fills in what it leaves unset (colors, margins). */
function figureLayout(layout) {
  const base = baseLayout({ margin: { l: 48, r: 12, t: 28, b: 36 } });
  delete base.showlegend; // a logged figure decides its own legend
  const own = layout || {};
  const out = { ...base, ...own, autosize: true };
  // theme the two main axes' lines and grid unless the figure styles them itself (a plotly.py
  // figure carries a template, which then wins over these defaults anyway)
  if (!own.template) for (const key of ['xaxis', 'yaxis']) out[key] = { ...axis(), ...(own[key] || {}) };
  return out;
}

class FiguresView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, { id: 'figures', kind: 'figure', noun: 'figures', makeCard: (c) => this.#makeCard(c) });
    setChildren(ctx.settings, el('h2', {}, 'Figures'), this.grid.syncControl());
    this.grid.layout();
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    const plot = el('div', { class: 'plot figure-plot', role: 'img', 'aria-label': `Figure ${tag} in run ${run}` });
    const image = el('button', { type: 'button', class: 'image-frame', hidden: true, 'aria-label': `Enlarge figure ${tag} (${run})` });
    const note = el('p', { class: 'figure-note muted', role: 'note', hidden: true });
    let seq = 0;
    const showPlotly = async (step, token) => {
      const fig = await getJSON('api/figures/data', { run, tag, step });
      if (token !== seq) return;
      image.hidden = true;
      const maps = mapTraces(fig.data);
      note.hidden = !maps.length;
      if (maps.length) {
        note.textContent = `${MAP_NOTE} (${maps.join(', ')})`;
        if (plotlyReady() && plot.data) Plotly.purge(plot);
        plot.hidden = true;
        return;
      }
      if (!plotlyReady()) throw new Error('plotly.js failed to load.');
      plot.hidden = false;
      await Plotly.react(plot, { data: fig.data || [], layout: figureLayout(fig.layout), frames: fig.frames, config: PLOT_CONFIG });
    };
    const showPng = async (step, token) => {
      const img = new Image();
      img.src = apiURL('api/figures/data', { run, tag, step });
      img.alt = `Figure ${tag}, run ${run}, step ${step}`;
      await img.decode();
      if (token !== seq) return;
      if (plot.data) Plotly.purge(plot);
      plot.hidden = true;
      note.hidden = true;
      image.hidden = false;
      image.replaceChildren(img);
    };
    image.addEventListener('click', () => {
      const img = image.querySelector('img');
      if (img) openLightbox({ src: img.src, alt: img.alt, caption: `${tag} · ${run} · step ${card.dataset.step}` });
    });
    const show = async (i, data) => {
      const token = (seq += 1);
      const step = data.steps[i];
      card.dataset.format = data.format[i];
      if (data.format[i] === 'png') await showPng(step, token);
      else await showPlotly(step, token);
      if (token === seq) card.dataset.shown = String(step);
    };
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/figures', { run, tag }),
      show,
      content: [plot, image, note],
      destroy: () => {
        if (plotlyReady() && plot.data) Plotly.purge(plot);
      },
    });
  }
}

registerView(runTagView({ id: 'figures', label: 'Figures', kind: 'figure', order: 90, View: FiguresView }));
