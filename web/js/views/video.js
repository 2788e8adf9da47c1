// The video dashboard: a card per run × tag with a step slider synced across runs like the
// images'. Videos are served as they were encoded at write time (MP4, or GIF when the writer
// had no PyAV; TensorBoard's add_video GIFs too): an MP4 plays in a <video> with frame
// stepping (±1/fps), loop and speed; a GIF plays itself in an <img>.
import { registerView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON, apiURL } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { el, setChildren, ensureStylesheet } from '../shared/dom.js';
import { stateCheckbox, stateSelect } from '../shared/controls.js';

state.declare('videoLoop', true);
state.declare('videoSpeed', '1');

const SPEEDS = [['0.25', '0.25×'], ['0.5', '0.5×'], ['1', '1×'], ['2', '2×'], ['4', '4×']];

function button(text, label, onClick) {
  const b = el('button', { type: 'button', class: 'btn', 'aria-label': label, title: label }, text);
  b.addEventListener('click', onClick);
  return b;
}

/** Settles when the video's first frame is there (or it failed); its listeners go then. */
function firstFrame(video, step) {
  return new Promise((resolve, reject) => {
    const settle = (ok) => () => {
      video.removeEventListener('loadeddata', onLoaded);
      video.removeEventListener('error', onError);
      if (ok) resolve();
      else reject(new Error(`The video at step ${step} could not be played.`));
    };
    const onLoaded = settle(true);
    const onError = settle(false);
    video.addEventListener('loadeddata', onLoaded);
    video.addEventListener('error', onError);
  });
}

class VideoView {
  constructor(ctx) {
    this.ctx = ctx;
    this.players = new Set();
    ensureStylesheet('media-css', 'static/css/media.css');
    this.grid = new RunTagGrid(ctx, { id: 'video', kind: 'video', noun: 'videos', makeCard: (c) => this.#makeCard(c) });
    setChildren(
      ctx.settings,
      el('h2', {}, 'Video'),
      this.grid.syncControl(),
      stateCheckbox('videoLoop', 'Loop', () => this.#applyPlayback(), { name: 'video-loop' }),
      stateSelect('videoSpeed', 'Speed', SPEEDS, () => this.#applyPlayback(), { name: 'video-speed' }),
    );
    this.grid.layout();
  }

  #applyPlayback() {
    for (const video of this.players) this.#playback(video);
  }

  #playback(video) {
    video.loop = state.get('videoLoop');
    const speed = Number(state.get('videoSpeed')) || 1;
    video.defaultPlaybackRate = speed;
    video.playbackRate = speed;
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    const frame = el('div', { class: 'video-frame' });
    const video = el('video', { muted: true, playsinline: true, preload: 'auto', 'aria-label': `${tag} (${run})` });
    video.muted = true;
    video.autoplay = true;
    this.players.add(video);
    this.#playback(video);
    const time = el('span', { class: 'video-time' });
    const meta = el('p', { class: 'card-note image-meta' });
    let fps = 4;
    const stepFrame = (d) => {
      video.pause();
      const frames = Math.max(1, Math.round(video.duration * fps) || 1);
      const at = Math.floor(video.currentTime * fps + 1e-6) + d;
      // land in the middle of the frame: a time on its edge may show either neighbour
      video.currentTime = (Math.min(Math.max(at, 0), frames - 1) + 0.5) / fps;
    };
    const playPause = button('Pause', 'Play or pause', () => (video.paused ? video.play().catch(() => {}) : video.pause()));
    video.addEventListener('play', () => { playPause.textContent = 'Pause'; });
    video.addEventListener('pause', () => { playPause.textContent = 'Play'; });
    const controls = el('div', { class: 'video-controls' },
      button('‹ Frame', 'Previous frame', () => stepFrame(-1)), playPause,
      button('Frame ›', 'Next frame', () => stepFrame(1)), time);
    const showTime = () => {
      time.textContent = `frame ${Math.min(Math.floor(video.currentTime * fps) + 1, Math.round(video.duration * fps) || 1)}`;
    };
    video.addEventListener('timeupdate', showTime);
    video.addEventListener('seeked', showTime);
    let seq = 0;
    const show = async (i, data) => {
      const token = (seq += 1);
      const step = data.steps[i];
      const url = apiURL('api/videos/data', { run, tag, step });
      fps = data.fps[i] || 4;
      meta.textContent = `${data.width[i]}×${data.height[i]} · ${data.frames[i]} frames at ${fps} fps`;
      if (data.mime[i] === 'image/gif') {
        const img = new Image();
        img.alt = `${tag}, run ${run}, step ${step}`;
        img.src = url;
        await img.decode();
        if (token !== seq) return;
        video.removeAttribute('src');
        frame.replaceChildren(img);
        controls.hidden = true;
      } else {
        const ready = firstFrame(video, step);
        video.src = url;
        this.#playback(video);
        if (frame.firstChild !== video) frame.replaceChildren(video);
        controls.hidden = false;
        await ready;
        if (token !== seq) return;
      }
      frame.dataset.step = String(step);
      card.dataset.shown = String(step);
    };
    card.classList.add('video-card');
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/videos', { run, tag }),
      show,
      content: [frame, controls, meta],
      destroy: () => {
        this.players.delete(video);
        video.removeAttribute('src');
        video.load();
      },
    });
  }
}

registerView(runTagView({ id: 'video', label: 'Video', kind: 'video', order: 25, View: VideoView, needsPlotly: false }));
