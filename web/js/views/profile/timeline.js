// The profile dashboard's timeline: threads and GPU streams as tracks, drawn on one <canvas>.
//
// The server sends only the events inside the visible window at the canvas' resolution
// (shorter ones merged per pixel), so a trace of a million events costs the browser a few
// thousand rectangles. Between answers the last one is redrawn under the new window at
// once (a pan or zoom frame draws immediately), and the window is fetched again, the newest
// request winning. Keys (when the canvas has focus): W/S zoom in/out, A/D pan.
import { getJSONWhenReady } from '../../shared/api.js';
import { el, setChildren } from '../../shared/dom.js';

const ROW = 16; // px per nesting level
const GAP = 6; // px between tracks
const LABEL = 170; // px of track labels at the left
const AXIS = 20; // px of time axis at the top

export function fmtTime(us) {
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  return `${us.toFixed(3)} µs`;
}

function hue(text) {
  let h = 0;
  for (let i = 0; i < text.length; i += 1) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return h % 360;
}

export class Timeline {
  constructor(params, { onStatus } = {}) {
    this.params = params; // {run, tag, step}
    this.onStatus = onStatus || (() => {});
    this.data = null;
    this.seq = 0;
    this.view = null; // {start, end}
    this.full = null;
    this.hits = [];
    this.canvas = el('canvas', {
      class: 'prof-canvas',
      tabindex: '0',
      role: 'img',
      'aria-label': 'Timeline of the trace: W and S zoom, A and D pan, click an event for details',
    });
    this.details = el('div', { class: 'prof-details', 'aria-live': 'polite' }, 'Click an event for its details.');
    this.searchInput = el('input', { type: 'search', placeholder: 'Find events by name', 'aria-label': 'Find events by name', name: 'timeline-search' });
    this.results = el('ol', { class: 'prof-results' });
    const form = el('form', { class: 'prof-search', role: 'search' }, this.searchInput, el('button', { type: 'submit', class: 'btn' }, 'Find'));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.search(this.searchInput.value.trim());
    });
    const help = el('p', { class: 'muted prof-help' }, 'Wheel or W/S: zoom · drag or A/D: pan · click: details · ',
      el('button', { type: 'button', class: 'btn linkish', onclick: () => this.reset() }, 'Reset zoom'));
    this.element = el('div', { class: 'prof-tl' }, form, help, el('div', { class: 'prof-canvas-wrap' }, this.canvas),
      el('div', { class: 'prof-side' }, el('h3', {}, 'Details'), this.details, el('h3', {}, 'Matches'), this.results));
    this.#wire();
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(this.canvas.parentElement);
  }

  destroy() {
    this.resizeObserver.disconnect();
    this.seq += 1;
  }

  /** The whole trace's first window; true once it is drawn (false: the status says why). */
  async load() {
    await this.fetch(null, null);
    return this.data !== null;
  }

  reset() {
    if (this.full) this.setWindow(this.full.start, this.full.end);
  }

  width() {
    const guess = Math.max(400, ((document.getElementById('main') || {}).clientWidth || 1100) - 320);
    return Math.max(100, Math.floor(this.canvas.parentElement.clientWidth || guess) - LABEL);
  }

  async fetch(start, end) {
    const seq = ++this.seq;
    const q = { ...this.params, width: this.width() };
    if (start !== null) q.start = start;
    if (end !== null) q.end = end;
    this.canvas.dataset.requested = `${start ?? ''},${end ?? ''}`;
    this.canvas.dataset.requests = String(Number(this.canvas.dataset.requests || 0) + 1);
    let body;
    try {
      body = await getJSONWhenReady('api/profile/timeline', q);
    } catch (err) {
      if (seq === this.seq) this.onStatus(err.message, true);
      return;
    }
    if (seq !== this.seq) return;
    this.data = body;
    if (!this.full) this.full = { start: body.start, end: body.end };
    if (!this.view) this.view = { start: body.start, end: body.end };
    this.canvas.dataset.start = String(body.start);
    this.canvas.dataset.end = String(body.end);
    this.canvas.dataset.events = String(body.events.ts.length);
    this.canvas.dataset.state = 'ready';
    this.draw();
  }

  setWindow(start, end) {
    const span = end - start;
    if (!(span > 0.001)) return;
    this.view = { start, end };
    this.draw(); // at once, with the data we have
    cancelAnimationFrame(this.pending);
    this.pending = requestAnimationFrame(() => this.fetch(start, end));
  }

  zoom(factor, at = 0.5) {
    if (!this.view) return;
    const { start, end } = this.view;
    const pivot = start + (end - start) * at;
    this.setWindow(pivot - (pivot - start) * factor, pivot + (end - pivot) * factor);
  }

  pan(fraction) {
    if (!this.view) return;
    const shift = (this.view.end - this.view.start) * fraction;
    this.setWindow(this.view.start + shift, this.view.end + shift);
  }

  #wire() {
    const c = this.canvas;
    c.addEventListener('keydown', (e) => {
      const key = e.key.toLowerCase();
      const acts = { w: () => this.zoom(0.8), s: () => this.zoom(1.25), a: () => this.pan(-0.2), d: () => this.pan(0.2) };
      if (acts[key] && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        acts[key]();
      }
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = c.getBoundingClientRect();
      const at = Math.min(1, Math.max(0, (e.clientX - rect.left - LABEL) / (rect.width - LABEL)));
      if (e.shiftKey) this.pan(e.deltaY > 0 ? 0.1 : -0.1);
      else this.zoom(e.deltaY > 0 ? 1.2 : 1 / 1.2, at);
    }, { passive: false });
    let drag = null;
    c.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, view: this.view, moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener('pointermove', (e) => {
      if (!drag || !drag.view) return;
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (!drag.moved) return;
      const span = drag.view.end - drag.view.start;
      const shift = (-dx / (c.clientWidth - LABEL)) * span;
      this.setWindow(drag.view.start + shift, drag.view.end + shift);
    });
    c.addEventListener('pointerup', (e) => {
      const wasDrag = drag && drag.moved;
      drag = null;
      if (!wasDrag) this.#click(e);
    });
  }

  #click(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const hit = this.hits.find((h) => x >= h.x && x <= h.x + Math.max(h.w, 2) && y >= h.y && y <= h.y + ROW - 1);
    if (hit) this.showEvent(hit);
  }

  async showEvent(hit) {
    if (hit.id < 0) {
      setChildren(this.details, el('p', {}, `${hit.count} events shorter than a pixel, merged (${fmtTime(hit.dur)} in all, e.g. ${hit.name}). Zoom in to see them.`));
      return;
    }
    try {
      const ev = await getJSONWhenReady('api/profile/event', { ...this.params, id: hit.id });
      const rows = [['Name', ev.name], ['Category', ev.cat], ['Thread', ev.track_label], ['Start', fmtTime(ev.ts - this.data.t0)],
        ['Duration', fmtTime(ev.dur)], ['Self time', fmtTime(ev.self)], ['Phase', ev.phase], ['Parent', ev.parent || '—']];
      for (const [k, v] of Object.entries(ev.args || {})) rows.push([k, typeof v === 'string' ? v : JSON.stringify(v)]);
      setChildren(this.details, el('table', { class: 'prof-kv', dataset: { id: String(ev.id) } },
        el('tbody', {}, rows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, String(v)))))));
    } catch (err) {
      setChildren(this.details, el('p', { role: 'alert' }, err.message));
    }
  }

  async search(q) {
    if (!q) {
      setChildren(this.results);
      return;
    }
    try {
      const found = await getJSONWhenReady('api/profile/search', { ...this.params, q, limit: 100 });
      const items = found.events.map((ev) => el('li', {}, el('button', {
        type: 'button',
        class: 'btn linkish',
        onclick: () => {
          const pad = Math.max(ev.dur * 0.5, 1);
          this.setWindow(ev.ts - pad, ev.ts + ev.dur + pad);
          this.showEvent({ id: ev.id });
        },
      }, `${ev.name} · ${fmtTime(ev.dur)}`)));
      setChildren(this.results, found.total > items.length ? [...items, el('li', { class: 'muted' }, `… ${found.total - items.length} more`)] : items);
      if (!found.total) setChildren(this.results, el('li', { class: 'muted' }, 'No event matches.'));
    } catch (err) {
      setChildren(this.results, el('li', { role: 'alert' }, err.message));
    }
  }

  draw() {
    const data = this.data;
    const c = this.canvas;
    const wrap = c.parentElement;
    if (!data || !wrap) return;
    const t = performance.now();
    const tracks = data.tracks.filter((tr) => tr.events > 0).sort((a, b) => a.order - b.order);
    const top = new Map();
    let y = AXIS;
    for (const tr of tracks) {
      top.set(tr.id, y);
      y += Math.max(1, tr.depth) * ROW + GAP;
    }
    const cssW = Math.max(200, wrap.clientWidth || 800);
    const cssH = Math.max(y, 60);
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
      c.style.width = `${cssW}px`;
      c.style.height = `${cssH}px`;
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const css = getComputedStyle(document.documentElement);
    const fg = css.getPropertyValue('--fg').trim() || '#222';
    const muted = css.getPropertyValue('--muted').trim() || '#888';
    g.clearRect(0, 0, cssW, cssH);
    const { start, end } = this.view;
    const plotW = cssW - LABEL;
    const scale = plotW / (end - start);
    // axis
    g.fillStyle = muted;
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const ticks = 6;
    for (let i = 0; i <= ticks; i += 1) {
      const x = LABEL + (plotW * i) / ticks;
      g.fillRect(x, AXIS - 4, 1, 4);
      g.fillText(fmtTime(start + ((end - start) * i) / ticks - data.t0), Math.min(x + 2, cssW - 60), 8);
    }
    // events
    const ev = data.events;
    const hits = [];
    g.textBaseline = 'middle';
    for (let i = 0; i < ev.ts.length; i += 1) {
      const y0 = top.get(ev.track[i]);
      if (y0 === undefined) continue;
      let x0 = (ev.ts[i] - start) * scale;
      let x1 = (ev.ts[i] + ev.dur[i] - start) * scale;
      if (x1 < 0 || x0 > plotW) continue;
      x0 = Math.max(x0, 0);
      x1 = Math.min(x1, plotW);
      const w = Math.max(x1 - x0, 1);
      const name = data.names[ev.name[i]] || '';
      const yy = y0 + ev.depth[i] * ROW;
      const merged = ev.count[i] > 1;
      g.fillStyle = merged ? 'hsl(0 0% 60%)' : `hsl(${hue(name)} 55% 60%)`;
      g.fillRect(LABEL + x0, yy, w, ROW - 2);
      if (w > 40) {
        g.fillStyle = '#111';
        g.save();
        g.beginPath();
        g.rect(LABEL + x0, yy, w, ROW - 2);
        g.clip();
        g.fillText(name, LABEL + x0 + 3, yy + (ROW - 2) / 2);
        g.restore();
      }
      hits.push({ x: LABEL + x0, w, y: yy, id: ev.id[i], count: ev.count[i], dur: ev.dur[i], name });
    }
    // labels over a plain band, so long names stay readable
    g.clearRect(0, AXIS, LABEL - 2, cssH);
    g.fillStyle = fg;
    for (const tr of tracks) {
      const y0 = top.get(tr.id);
      g.fillText(tr.label.length > 26 ? `${tr.label.slice(0, 25)}…` : tr.label, 4, y0 + ROW / 2);
      g.fillStyle = muted;
      g.fillRect(0, y0 - GAP / 2, cssW, 0.5);
      g.fillStyle = fg;
    }
    this.hits = hits;
    c.dataset.viewStart = String(start);
    c.dataset.viewEnd = String(end);
    c.dataset.frameMs = (performance.now() - t).toFixed(2);
    this.onStatus(`${data.events.ts.length} blocks on screen · window ${fmtTime(end - start)}${data.truncated ? ' (longest shown)' : ''}`, false);
  }
}
