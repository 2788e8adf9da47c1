// The images dashboard: a card per run × tag with a slider over every recorded step. Image
// bytes come from /api/images/data by (run, tag, step) with long-lived caching, so moving back
// over steps already seen costs no request; the neighbours of the shown step are prefetched
// so that the next arrow key press paints at once.
import { registerView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, apiURL } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { openLightbox } from '../shared/lightbox.js';
import { el, setChildren, uid } from '../shared/dom.js';
import { stateCheckbox } from '../shared/controls.js';
import { createBoxLayer } from './image_boxes.js';

state.declare('actual', false);
state.declare('brightness', 100);
state.declare('contrast', 100);

const PREFETCH = 2; // steps on each side kept warm in the browser cache

class ImagesView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'images',
      kind: 'image',
      noun: 'images',
      makeCard: (c) => this.#makeCard(c),
    });
    this.#buildSettings();
    this.#applyLook();
    this.grid.layout();
  }

  #buildSettings() {
    const sliders = ['brightness', 'contrast'].map((key) => this.#percentSlider(key));
    const reset = el('button', { type: 'button', class: 'btn' }, 'Reset brightness & contrast');
    reset.addEventListener('click', () => {
      state.set({ brightness: 100, contrast: 100 });
      sliders.forEach((s) => s.sync());
      this.#applyLook();
    });
    setChildren(
      this.ctx.settings,
      el('h2', {}, 'Images'),
      this.grid.syncControl(),
      stateCheckbox('actual', 'Show actual size', () => this.#applyLook(), { name: 'actual-size' }),
      ...sliders.map((s) => s.element),
      reset,
    );
  }

  #percentSlider(key) {
    const id = uid(key);
    const input = el('input', { id, type: 'range', min: '0', max: '300', step: '5', name: key });
    const out = el('output', { for: id, class: 'slider-value' });
    const sync = () => {
      input.value = String(state.get(key));
      out.textContent = `${state.get(key)}%`;
    };
    input.addEventListener('input', () => {
      state.set({ [key]: Number(input.value) });
      out.textContent = `${input.value}%`;
      this.#applyLook();
    });
    sync();
    const label = key[0].toUpperCase() + key.slice(1);
    const element = el('div', { class: 'field' }, el('label', { for: id }, label), el('div', { class: 'slider-row' }, input, out));
    return { element, sync };
  }

  /** Brightness, contrast and actual size apply to every card through CSS on the root. */
  #applyLook() {
    const root = this.grid.root;
    root.style.setProperty('--img-filter', this.#filter());
    root.classList.toggle('actual-size', state.get('actual'));
  }

  #filter() {
    const b = state.get('brightness');
    const c = state.get('contrast');
    return b === 100 && c === 100 ? 'none' : `brightness(${b}%) contrast(${c}%)`;
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    const frame = el('button', { type: 'button', class: 'image-frame', 'aria-label': `Enlarge ${tag} (${run})` });
    const meta = el('p', { class: 'card-note image-meta' });
    const boxes = createBoxLayer({ run, tag }); // boxes recorded over the image, if any
    let shown = null; // {url, step, alt, pixelated}
    let pending = null; // the newest [i, data] asked for while a load was in flight
    let busy = false;
    // Dragging a slider over 10,000 steps asks for thousands of images: load only the newest
    // request once the current one is on screen, so the image keeps up with the thumb.
    const show = async (i, data) => {
      pending = [i, data];
      if (busy) return;
      busy = true;
      let last = null;
      try {
        while (pending) {
          last = pending;
          pending = null;
          await load(...last);
        }
      } finally {
        busy = false;
      }
      prefetch(last[1], last[0]);
    };
    const load = async (i, data) => {
      const step = data.steps[i];
      const url = apiURL('api/images/data', { run, tag, step });
      const img = new Image();
      img.alt = `${tag}, run ${run}, step ${step}`;
      img.src = url;
      try {
        await img.decode();
      } catch (_) {
        throw new Error(`The image at step ${step} could not be loaded.`);
      }
      img.dataset.step = String(step);
      // small images are scaled up: keep their pixels sharp rather than blurred
      img.classList.toggle('pixelated', img.naturalWidth * 1.5 < (frame.clientWidth || 400));
      const count = (data.box_count && data.box_count[i]) || 0;
      frame.replaceChildren(await boxes.present(img, step, count));
      frame.dataset.step = String(step);
      shown = { url, step, alt: img.alt, pixelated: img.classList.contains('pixelated') };
      meta.textContent = `${data.width[i]}×${data.height[i]} · ${data.channels[i]} channel${data.channels[i] === 1 ? '' : 's'}${count ? ` · ${count} box${count === 1 ? '' : 'es'}` : ''}`;
    };
    const prefetch = (data, i) => {
      if (pending) return;
      for (let d = -PREFETCH; d <= PREFETCH; d += 1) {
        const j = i + d;
        if (d && j >= 0 && j < data.steps.length) {
          new Image().src = apiURL('api/images/data', { run, tag, step: data.steps[j] });
        }
      }
    };
    frame.addEventListener('click', () => {
      if (!shown) return;
      openLightbox({
        src: shown.url,
        alt: shown.alt,
        caption: `${tag} · ${run} · step ${shown.step}`,
        filter: this.#filter() === 'none' ? '' : this.#filter(),
        pixelated: shown.pixelated,
      });
    });
    card.classList.add('image-card');
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/images', { run, tag }),
      show,
      content: [frame, boxes.controls, meta],
    });
  }
}

registerView(runTagView({ id: 'images', label: 'Images', kind: 'image', order: 20, View: ImagesView, needsPlotly: false }));
