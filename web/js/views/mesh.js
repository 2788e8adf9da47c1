// The 3-D dashboard: a card per run × tag with a step slider; point clouds are drawn with
// plotly's WebGL scatter3d, meshes (with triangles) with mesh3d. Orbiting or zooming one plot
// moves the camera of every plot in the view, so runs are compared from the same viewpoint.
// A large point cloud arrives subsampled by the server; "Load all points" fetches the rest.
/* global Plotly */
import { registerView } from '../shared/views.js';
import { getJSON } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { baseLayout, axis, PLOT_CONFIG, plotlyReady } from '../shared/plot.js';
import { colorOf } from '../shared/colors.js';
import { el, setChildren, ensureStylesheet, fmtInt, uid } from '../shared/dom.js';
import * as state from '../shared/state.js';

state.declare('meshPoints', 100000); // points drawn of a larger point cloud

/** The bytes of a base64 string as a typed array of `Type`. */
function typed(b64, Type) {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return new Type(bytes.buffer);
}

/** Columns of an interleaved n × 3 array. */
function columns(flat) {
  const n = flat.length / 3;
  const cols = [new flat.constructor(n), new flat.constructor(n), new flat.constructor(n)];
  for (let i = 0, j = 0; i < n; i += 1, j += 3) {
    cols[0][i] = flat[j];
    cols[1][i] = flat[j + 1];
    cols[2][i] = flat[j + 2];
  }
  return cols;
}

const HEX = Array.from({ length: 256 }, (_, v) => v.toString(16).padStart(2, '0'));

/** One '#rrggbb' per point: plotly parses hex colours about twice as fast as rgb(). */
function hexColors(colors) {
  const out = new Array(colors.length / 3);
  for (let i = 0, j = 0; i < out.length; i += 1, j += 3) out[i] = `#${HEX[colors[j]]}${HEX[colors[j + 1]]}${HEX[colors[j + 2]]}`;
  return out;
}

/** The plotly trace of one mesh answer (/api/meshes/data). */
export function meshTrace(body, run) {
  const [x, y, z] = columns(typed(body.vertices, Float32Array));
  const colors = body.colors ? hexColors(typed(body.colors, Uint8Array)) : null;
  if (body.faces) {
    const [i, j, k] = columns(typed(body.faces, Int32Array));
    const trace = { type: 'mesh3d', x, y, z, i, j, k, flatshading: true, hoverinfo: 'skip' };
    if (colors) trace.vertexcolor = colors;
    else trace.color = colorOf(run);
    return trace;
  }
  return {
    type: 'scatter3d', mode: 'markers', x, y, z, hoverinfo: 'skip',
    marker: { size: body.shown > 20000 ? 1.5 : 3, color: colors || colorOf(run) },
  };
}

class MeshView {
  constructor(ctx) {
    this.ctx = ctx;
    this.plots = new Set();
    this.camera = null; // the camera every plot shares once the user moved one
    ensureStylesheet('media-css', 'static/css/media.css');
    this.grid = new RunTagGrid(ctx, { id: 'mesh', kind: 'mesh', noun: 'meshes', makeCard: (c) => this.#makeCard(c) });
    setChildren(ctx.settings, el('h2', {}, '3D'), this.grid.syncControl(), this.#pointsField(),
      el('p', { class: 'muted' }, 'Drag to orbit, scroll to zoom: every plot follows the camera.'));
    this.grid.layout();
  }

  /** How many points of a large point cloud are drawn (the rest on "Load all points"). */
  #pointsField() {
    const id = uid('mesh-points');
    const input = el('input', { id, type: 'number', min: '1000', step: '1000', name: 'mesh-points' });
    input.value = String(state.get('meshPoints'));
    input.addEventListener('change', () => {
      const n = Math.round(Number(input.value));
      if (!(n >= 1000)) return;
      state.set({ meshPoints: n });
      this.grid.layout();
    });
    return el('div', { class: 'field' }, el('label', { for: id }, 'Points drawn'), input);
  }

  /** Give every other plot the camera one of them moved to. */
  #share(from, camera) {
    this.camera = camera;
    for (const plot of this.plots) {
      if (plot !== from && plot.data) {
        plot.dataset.syncing = '1';
        Plotly.relayout(plot, { 'scene.camera': camera }).finally(() => delete plot.dataset.syncing);
      }
    }
  }

  #layout() {
    const scene = { aspectmode: 'data', xaxis: axis(), yaxis: axis(), zaxis: axis() };
    if (this.camera) scene.camera = this.camera;
    return baseLayout({ margin: { l: 0, r: 0, t: 0, b: 0 }, scene, uirevision: 'mesh' });
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    const plot = el('div', { class: 'plot mesh-plot', role: 'img', 'aria-label': `3-D ${tag} in run ${run}` });
    const note = el('span', { class: 'card-note mesh-note' });
    const all = el('button', { type: 'button', class: 'btn', hidden: true }, 'Load all points');
    const sample = el('select', { 'aria-label': 'Sample', hidden: true });
    this.plots.add(plot);
    let current = null; // [i, data]
    let seq = 0;
    const draw = async (maxPoints) => {
      const [i, data] = current;
      const token = (seq += 1);
      const step = data.steps[i];
      const params = { run, tag, step, sample: Number(sample.value) || 0 };
      params.max_points = maxPoints === undefined ? state.get('meshPoints') : maxPoints;
      const body = await getJSON('api/meshes/data', params);
      if (token !== seq) return;
      if (!plotlyReady()) throw new Error('plotly.js failed to load.');
      await Plotly.react(plot, [meshTrace(body, run)], this.#layout(), PLOT_CONFIG);
      if (!plot.dataset.hooked) {
        plot.dataset.hooked = '1';
        plot.on('plotly_relayout', (e) => {
          if (plot.dataset.syncing || !e || !e['scene.camera']) return;
          this.#share(plot, e['scene.camera']);
        });
      }
      const faces = body.triangles ? ` · ${fmtInt(body.triangles)} triangles` : '';
      note.textContent = body.shown < body.points
        ? `${fmtInt(body.shown)} of ${fmtInt(body.points)} points drawn${faces}`
        : `${fmtInt(body.points)} ${body.triangles ? 'vertices' : 'points'}${faces}`;
      all.hidden = body.shown >= body.points;
      card.dataset.shown = String(step);
      card.dataset.points = String(body.shown);
    };
    const show = async (i, data) => {
      current = [i, data];
      const batch = data.batch[i] || 1;
      if (sample.options.length !== batch) {
        sample.replaceChildren(...Array.from({ length: batch }, (_, k) => el('option', { value: String(k) }, `sample ${k}`)));
      }
      sample.hidden = batch < 2;
      await draw();
    };
    all.addEventListener('click', () => draw(0).catch((err) => this.grid.showError(card, err)));
    sample.addEventListener('change', () => draw().catch((err) => this.grid.showError(card, err)));
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/meshes', { run, tag }),
      show,
      content: [plot, el('div', { class: 'mesh-controls' }, sample, all, note)],
      destroy: () => {
        this.plots.delete(plot);
        if (plotlyReady() && plot.data) Plotly.purge(plot);
      },
    });
  }
}

registerView(runTagView({ id: 'mesh', label: '3D', kind: 'mesh', order: 95, View: MeshView }));
