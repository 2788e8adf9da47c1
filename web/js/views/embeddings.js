// The embeddings dashboard: a wide card per run × tag with the matrix projected by the server
// (PCA with numpy; t-SNE and UMAP when their libraries are installed), drawn as a 2D or 3D
// plotly scatter, colored by a metadata column, with a label search that highlights points.
// Large matrices are sampled by the server; the card says so. t-SNE and UMAP answer PCA at
// once and are refined on the server: the card draws each frame it polls (the camera stays,
// since every frame has one scale) with a progress bar, until the answer says `final`.
import { registerView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, getJSONWhenReady, ApiError } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { createPlot } from '../shared/plotcard.js';
import { baseLayout, axis, plotlyText, themeColors, onThemeChange } from '../shared/plot.js';
import { el, setChildren, uid, fmtInt, debounce } from '../shared/dom.js';
import { stateRadios, stateSelect } from '../shared/controls.js';
import { embeddingFigure } from './embeddings_plot.js';
import { createThumbs } from './embedding_thumbs.js';

state.declare('embMethod', 'pca');
state.declare('embDims', 2);

const METHODS = [['pca', 'PCA'], ['tsne', 't-SNE'], ['umap', 'UMAP']];
const POLL_MS = 700; // between two asks for a refinement's next frame

class EmbeddingsView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, { id: 'embeddings', kind: 'embedding', noun: 'embeddings', wide: true, makeCard: (c) => this.#makeCard(c) });
    this.#buildSettings();
    this.stopTheme = onThemeChange(() => this.grid.each((c) => c.draw()));
    this.grid.layout();
  }

  #buildSettings() {
    const project = () => this.grid.each((c) => c.project());
    setChildren(
      this.ctx.settings,
      el('h2', {}, 'Embeddings'),
      stateSelect('embMethod', 'Projection', METHODS, project, { name: 'emb-method' }),
      stateRadios('embDims', 'Dimensions', [[2, '2D'], [3, '3D']], project, { name: 'emb-dims', inline: true }),
      el('p', { class: 'muted small' }, 't-SNE and UMAP are computed on request: PCA is shown at once, then their refinement as it forms.'),
    );
  }

  #makeCard({ run, tag, body, card }) {
    const stepId = uid('emb-step');
    const colorId = uid('emb-color');
    const searchId = uid('emb-search');
    const stepSelect = el('select', { id: stepId, name: 'emb-step' });
    const colorSelect = el('select', { id: colorId, name: 'emb-color' });
    const search = el('input', { id: searchId, type: 'search', name: 'emb-search', placeholder: 'label text or regex', autocomplete: 'off' });
    const status = el('p', { class: 'emb-status', role: 'status', 'aria-live': 'polite' });
    const message = el('p', { class: 'emb-message', role: 'alert', hidden: true });
    const progress = progressBar();
    const plot = createPlot(`Embedding ${tag} of run ${run}`, { className: 'plot emb-plot' });
    const thumbs = createThumbs(); // the hovered point's label_img, when recorded
    body.append(
      el(
        'div',
        { class: 'emb-controls' },
        el('div', { class: 'field' }, el('label', { for: stepId }, 'Step'), stepSelect),
        el('div', { class: 'field' }, el('label', { for: colorId }, 'Color by'), colorSelect),
        el('div', { class: 'field emb-search' }, el('label', { for: searchId }, 'Search labels'), search),
      ),
      status,
      progress.element,
      message,
      el('div', { class: 'emb-plot-wrap' }, plot.element, thumbs.element),
    );
    let index = null;
    let projection = null;
    let seq = 0;

    const controller = {
      async refresh() {
        index = await getJSON('api/embeddings', { run, tag });
        const keep = stepSelect.value;
        setChildren(stepSelect, index.steps.map((s, i) => el('option', { value: String(s) }, `${s} (${index.shape[i][0]}×${index.shape[i][1]})`)));
        stepSelect.value = index.steps.map(String).includes(keep) ? keep : String(index.steps[index.steps.length - 1]);
        stepSelect.disabled = index.steps.length < 2;
        await controller.project();
      },
      async project() {
        if (!index) return;
        const method = state.get('embMethod');
        const dims = Number(state.get('embDims')) === 3 ? 3 : 2;
        const token = (seq += 1);
        const label = METHODS.find(([v]) => v === method)?.[1] || method;
        status.textContent = `Computing ${label}…`;
        card.dataset.state = 'loading';
        message.hidden = true;
        progress.show(null);
        const wanted = () => token === seq && card.isConnected;
        const ask = () => getJSONWhenReady('api/embeddings/projection',
          { run, tag, step: stepSelect.value, method, dims }, {
            // the server is busy preparing other projections
            onWait: (wait) => {
              status.textContent = `${label} is waiting for the server; trying again in ${wait} s…`;
            },
            wanted,
            fallback: 5,
          });
        try {
          let body = await ask();
          if (!wanted() || body === null) return;
          fillColorOptions(colorSelect, body.metadata_header);
          const at = index.steps.map(String).indexOf(stepSelect.value);
          thumbs.use(run, tag, stepSelect.value, body.total, at >= 0 && index.thumbnail ? index.thumbnail[at] : null);
          for (;;) {
            projection = body;
            controller.draw();
            progress.show(body.final ? null : body.progress);
            card.dataset.progress = String(body.progress);
            card.dataset.state = body.final ? 'ready' : 'refining';
            if (body.final) return;
            await new Promise((resolve) => { setTimeout(resolve, POLL_MS); });
            if (!wanted()) return;
            const next = await ask();
            if (!wanted() || next === null) return;
            if (next.progress !== body.progress || next.final) body = next;
          }
        } catch (err) {
          if (token !== seq) return;
          projection = null;
          progress.show(null);
          plot.purge();
          status.textContent = '';
          message.hidden = false;
          message.textContent = err instanceof ApiError && err.status === 501
            ? `${label} is not available on this server: ${err.message}. PCA always works.`
            : `Could not compute the projection: ${err.message}`;
          card.dataset.state = err instanceof ApiError && err.status === 501 ? 'unavailable' : 'error';
        }
      },
      draw() {
        if (!projection) return;
        const fig = embeddingFigure(projection, {
          colorBy: colorSelect.value === '' ? -1 : Number(colorSelect.value),
          search: search.value,
          theme: themeColors(),
          layout: baseLayout,
          axis,
          text: plotlyText,
        });
        plot.draw(fig.traces, fig.layout).then(() => thumbs.bind(plot.element));
        card.dataset.points = String(fig.points);
        card.dataset.matches = String(fig.matches);
        search.setAttribute('aria-invalid', fig.searchError ? 'true' : 'false');
        const base = describe(projection, METHODS.find(([v]) => v === projection.method)?.[1]);
        status.textContent = search.value
          ? `${base} · ${fmtInt(fig.matches)} match${fig.matches === 1 ? '' : 'es'}${fig.searchError ? ' (invalid regex, matched as text)' : ''}`
          : base;
      },
      destroy: () => plot.purge(),
    };
    stepSelect.addEventListener('change', () => controller.project());
    colorSelect.addEventListener('change', () => {
      colorSelect.dataset.picked = '1';
      controller.draw();
    });
    search.addEventListener('input', debounce(() => controller.draw(), 150));
    return controller;
  }
}

function fillColorOptions(select, header) {
  const keep = select.value;
  const options = [el('option', { value: '' }, 'None')];
  (header || []).forEach((name, i) => options.push(el('option', { value: String(i) }, name)));
  setChildren(select, options);
  const valid = keep === '' || Number(keep) < (header || []).length;
  // the first column (usually the label) until the user picks one, "None" included
  select.value = select.dataset.picked && valid ? keep : header && header.length ? '0' : '';
  select.disabled = !header || !header.length;
}

function describe(body, label) {
  const extra = body.explained_variance
    ? ` · variance explained ${body.explained_variance.map((v) => `${(v * 100).toFixed(1)}%`).join(' / ')}`
    : '';
  const count = body.sampled
    ? `Sampled ${fmtInt(body.shown)} of ${fmtInt(body.total)} points`
    : `${fmtInt(body.total)} points`;
  return `${label} ${body.dims}D · ${count}${extra}${refining(body, label)}`;
}

function refining(body, label) {
  if (body.final !== false) return '';
  const done = `${Math.round((body.progress || 0) * 100)}%`;
  return body.frame === 'pca' ? ` · computing ${label} (${done}), PCA shown meanwhile` : ` · refining (${done})`;
}

/** A progress bar for a refinement: hidden when done; `show(null)` hides it. */
function progressBar() {
  const fill = el('span', { class: 'emb-progress-fill' });
  const element = el('div', {
    class: 'emb-progress', role: 'progressbar', 'aria-label': 'Projection refinement',
    'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0', hidden: true,
  }, fill);
  return {
    element,
    show(fraction) {
      element.hidden = fraction === null;
      const pct = Math.round(Math.min(Math.max(fraction || 0, 0), 1) * 100);
      element.setAttribute('aria-valuenow', String(pct));
      element.setAttribute('aria-valuetext', `${pct}% refined`);
      fill.style.width = `${pct}%`;
    },
  };
}

registerView(runTagView({ id: 'embeddings', label: 'Embeddings', kind: 'embedding', order: 85, View: EmbeddingsView }));
