// The audio dashboard: a card per run × tag with a step slider, the browser's own <audio>
// player for the WAV (served by offset from the record file), its duration and sample rate,
// and a download link.
import { registerView } from '../shared/views.js';
import { getJSON, apiURL } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { fmtDuration } from '../shared/format.js';
import { el, setChildren } from '../shared/dom.js';

class AudioView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'audio',
      kind: 'audio',
      noun: 'audio',
      makeCard: (c) => this.#makeCard(c),
    });
    setChildren(ctx.settings, el('h2', {}, 'Audio'), this.grid.syncControl());
    this.grid.layout();
  }

  #makeCard(cardCtx) {
    const { run, tag } = cardCtx;
    const player = el('audio', { controls: true, preload: 'metadata', class: 'audio-player' });
    player.setAttribute('aria-label', `${tag} (${run})`);
    const meta = el('span', { class: 'audio-meta' });
    const download = el('a', { class: 'btn', download: '' }, 'Download WAV');
    const row = el('div', { class: 'audio-row' }, meta, download);
    const show = (i, data) => {
      const step = data.steps[i];
      const src = apiURL('api/audio/data', { run, tag, step });
      if (player.getAttribute('src') !== src) {
        player.src = src;
        player.dataset.step = String(step);
      }
      const channels = data.channels[i];
      meta.textContent = `${fmtDuration(data.durations[i])} · ${data.sample_rate[i]} Hz · ` +
        `${channels} channel${channels === 1 ? '' : 's'}`;
      download.href = apiURL('api/audio/data', { run, tag, step, download: 1 });
      download.setAttribute('aria-label', `Download ${tag} (${run}) step ${step} as WAV`);
    };
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/audio', { run, tag }),
      show,
      content: [player, row],
      destroy: () => {
        player.pause();
        player.removeAttribute('src');
      },
    });
  }
}

registerView(runTagView({ id: 'audio', label: 'Audio', kind: 'audio', order: 30, View: AudioView, needsPlotly: false }));
