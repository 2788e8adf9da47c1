// The profile dashboard (its tab is labelled Profiler): where a training step's time goes,
// for our traces and PyTorch's. Pick a run, a worker (tag), a profile and a span (all steps
// or one); then a tab each, a module each under profile/:
//   Overview  — each step's wall time split into phases (a stacked bar per step) + environment
//   Operators — calls, self/total time, mean, share of step; by name or name + input shapes
//   Kernels   — the same for GPU kernels (when the trace has them)
//   Timeline  — threads and GPU streams on a canvas
//   Memory    — allocated bytes over time per device, the peak, the ops allocating most
//   Compare   — two profiles' (or spans') operator tables side by side with differences
//   Distributed — every worker (rank) of the run: computation vs communication, the slowest
//               rank, the collectives (shown for 2+ workers or a trace with distributedInfo)
// and a download link for the raw trace (open it in Perfetto). Every request is relative
// (api/profile/...), so the app works behind a path prefix.
import { registerView, classView } from '../shared/views.js';
import { getJSONWhenReady } from '../shared/api.js';
import { el, setChildren, ensureStylesheet } from '../shared/dom.js';
import { createPlot } from '../shared/plotcard.js';
import { select, fillSelect } from './profile/fields.js';
import { Timeline } from './profile/timeline.js';
import { drawOverview } from './profile/overview.js';
import { drawOperators } from './profile/operators.js';
import { drawMemory } from './profile/memory.js';
import { drawCompare } from './profile/compare.js';
import { drawDistributed } from './profile/distributed.js';

const PANES = [
  ['overview', 'Overview'],
  ['operators', 'Operators'],
  ['kernels', 'Kernels'],
  ['timeline', 'Timeline'],
  ['memory', 'Memory'],
  ['compare', 'Compare'],
  ['distributed', 'Distributed'],
];

class ProfileView {
  constructor(ctx) {
    ensureStylesheet('profile-css', 'static/css/profile.css');
    this.ctx = ctx;
    const asked = new URLSearchParams(window.location.search).get('pane');
    const pane = PANES.some(([id]) => id === asked) ? asked : 'overview';
    this.sel = { run: '', tag: '', step: '', span: 'all', pane };
    this.profiles = [];
    this.summary = null;
    this.timeline = null;
    this.plots = [];
    this.runSel = select('Run', 'profile-run', (v) => this.pick({ run: v }));
    this.tagSel = select('Worker', 'profile-tag', (v) => this.pick({ tag: v }));
    this.stepSel = select('Profile', 'profile-step', (v) => this.pick({ step: v }));
    this.spanSel = select('Span', 'profile-span', (v) => this.pick({ span: v }, false));
    this.download = el('a', { class: 'btn prof-download', download: '', href: '#' }, 'Download trace (open in Perfetto)');
    setChildren(ctx.settings, el('h2', {}, 'Profiler'), this.runSel.field, this.tagSel.field, this.stepSel.field, this.spanSel.field,
      el('p', {}, this.download),
      el('p', { class: 'muted' }, 'Perfetto (ui.perfetto.dev) and chrome://tracing open the downloaded file.'));
    this.tabs = el('div', { class: 'prof-tabs', role: 'tablist', 'aria-label': 'Profiler views' });
    this.status = el('p', { class: 'prof-status', role: 'status' });
    this.body = el('div', { class: 'prof-body', role: 'tabpanel' });
    this.root = el('div', { class: 'profiler' }, this.tabs, this.status, this.body);
    setChildren(ctx.main, this.root);
    this.refreshChoices();
  }

  destroy() {
    if (this.timeline) this.timeline.destroy();
    this.purge();
  }

  purge() {
    for (const p of this.plots) p.purge();
    this.plots = [];
  }

  update(change) {
    if (change && change.data) this.refreshChoices(false);
  }

  params() {
    return { run: this.sel.run, tag: this.sel.tag, step: this.sel.step };
  }

  async refreshChoices(render = true) {
    const tags = this.ctx.tagsOf('profile') || {};
    const runs = Object.keys(tags).sort();
    const run = fillSelect(this.runSel.node, runs.map((r) => [r, r]), this.sel.run);
    const tag = fillSelect(this.tagSel.node, (tags[run] || []).map((t) => [t, t]), this.sel.tag);
    const before = `${this.sel.run}|${this.sel.tag}|${this.sel.step}`;
    this.sel.run = run;
    this.sel.tag = tag;
    if (!run || !tag) {
      setChildren(this.body, el('p', { class: 'empty' }, 'No profiles yet.'));
      return;
    }
    const index = await getJSONWhenReady('api/profile', { run, tag });
    this.profiles = index.steps.map((s, i) => ({ step: s, end: index.end_step[i], source: index.source[i], error: index.error[i] }));
    const opts = this.profiles.map((p) => [String(p.step), p.end > p.step ? `steps ${p.step}–${p.end}` : `step ${p.step}`]).reverse();
    this.sel.step = fillSelect(this.stepSel.node, opts, this.sel.step);
    if (render || before !== `${this.sel.run}|${this.sel.tag}|${this.sel.step}`) await this.load();
  }

  async pick(change, reload = true) {
    Object.assign(this.sel, change);
    if ('run' in change) {
      this.sel.tag = '';
      this.sel.step = '';
    }
    if ('tag' in change) this.sel.step = '';
    if (reload && !('span' in change)) {
      if ('step' in change) await this.load();
      else await this.refreshChoices();
    } else {
      this.renderPane();
    }
  }

  async load() {
    const p = this.params();
    const seq = (this.loadSeq = (this.loadSeq || 0) + 1);
    this.download.href = `api/profile/trace?${new URLSearchParams(p)}`;
    this.summary = null;
    this.overviewData = null;
    if (this.timeline) this.timeline.destroy();
    this.timeline = null;
    this.showStatus('Loading the trace…');
    const known = this.profiles.find((x) => String(x.step) === this.sel.step);
    if (known && known.error) { // the index already says why this file cannot be read
      this.fail(`This trace cannot be read: ${known.error}`);
      return;
    }
    // Opened on the timeline: its first window is what the user waits for, so it is asked
    // for alone and drawn as soon as it comes; the overview (status line, span list, which
    // tabs) follows, instead of competing with it for the server.
    let shown = false;
    if (this.sel.pane === 'timeline') {
      const drawn = await this.startTimeline();
      if (seq !== this.loadSeq) return;
      if (drawn) {
        this.showStatus('Loading the overview…');
        this.renderTabs();
        await this.renderPane();
        shown = true;
      }
    }
    try {
      this.overviewData = await getJSONWhenReady('api/profile/overview', p);
      if (seq !== this.loadSeq) return;
      this.summary = this.overviewData.summary;
      this.showStatus(`${this.summary.events.toLocaleString('en-US')} events · ${this.summary.steps.length} steps · ${this.summary.source} trace` +
        (this.summary.warnings.length ? ` · ${this.summary.warnings.join('; ')}` : ''));
    } catch (err) {
      if (seq === this.loadSeq) this.fail(err.message);
      return;
    }
    const spans = [['all', 'All steps'], ...this.summary.steps.map((s) => [String(s), `Step ${s}`])];
    this.sel.span = fillSelect(this.spanSel.node, spans, this.sel.span);
    this.renderTabs();
    if (!shown || this.sel.pane !== 'timeline') this.renderPane();
  }

  /** Whether the trace has GPU events: from the overview, or the timeline's tracks before. */
  hasGpu() {
    if (this.summary) return this.summary.has_gpu;
    const data = this.timeline && this.timeline.data;
    return Boolean(data && data.tracks.some((t) => t.gpu));
  }

  /** Whether the run has 2+ workers or its trace says it is one rank of several. */
  isDistributed() {
    const workers = (this.ctx.tagsOf('profile') || {})[this.sel.run] || [];
    return workers.length > 1 || Boolean(this.summary && this.summary.distributed);
  }

  /** A pane can be drawn once the overview came, or (the timeline) its first window. */
  canRender() {
    return Boolean(this.summary || (this.sel.pane === 'timeline' && this.timeline && this.timeline.data));
  }

  fail(message) {
    this.summary = null;
    setChildren(this.tabs);
    this.showStatus(message, true);
    setChildren(this.body, el('p', { class: 'empty prof-error', role: 'alert' }, message));
  }

  showStatus(text, error = false) {
    this.status.textContent = text;
    this.status.classList.toggle('has-errors', error);
    this.root.dataset.state = error ? 'error' : 'ready';
  }

  renderTabs() {
    const panes = PANES.filter(([id]) => (id !== 'kernels' || this.hasGpu()) && (id !== 'distributed' || this.isDistributed()));
    if (this.sel.pane === 'distributed' && !this.isDistributed()) this.sel.pane = 'overview';
    setChildren(this.tabs, panes.map(([id, label]) => el('button', {
      type: 'button',
      role: 'tab',
      id: `prof-tab-${id}`,
      class: 'prof-tab',
      'aria-selected': String(id === this.sel.pane),
      dataset: { pane: id },
      onclick: () => {
        this.sel.pane = id;
        this.renderTabs();
        this.renderPane();
      },
      onkeydown: (e) => {
        if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
        const i = panes.findIndex(([p]) => p === id);
        const next = panes[(i + (e.key === 'ArrowRight' ? 1 : panes.length - 1)) % panes.length][0];
        this.sel.pane = next;
        this.renderTabs();
        this.renderPane();
        this.tabs.querySelector(`[data-pane="${next}"]`).focus();
      },
    }, label)));
    this.body.setAttribute('aria-labelledby', `prof-tab-${this.sel.pane}`);
  }

  async renderPane() {
    if (!this.canRender()) return;
    this.purge();
    const pane = this.sel.pane;
    this.body.dataset.pane = pane;
    const holder = el('div', { class: `prof-pane prof-${pane}` });
    setChildren(this.body, holder);
    const ctx = this.#paneContext();
    try {
      if (pane === 'overview') await drawOverview(holder, ctx);
      else if (pane === 'operators') await drawOperators(holder, ctx, 'operators');
      else if (pane === 'kernels') await drawOperators(holder, ctx, 'kernels');
      else if (pane === 'timeline') await this.drawTimeline(holder);
      else if (pane === 'memory') await drawMemory(holder, ctx);
      else if (pane === 'compare') await drawCompare(holder, ctx);
      else if (pane === 'distributed') await drawDistributed(holder, ctx);
      holder.dataset.state = 'ready';
    } catch (err) {
      setChildren(holder, el('p', { class: 'empty prof-error', role: 'alert' }, err.message));
      holder.dataset.state = 'error';
    }
  }

  /** What a tab's module draws from: the profile chosen (params), the choices (sel, where
   *  a tab keeps its own too), the overview, the profile tags, a plot maker (purged with the
   *  tab) and a way to draw the tab again. */
  #paneContext() {
    return {
      params: () => this.params(),
      sel: this.sel,
      overview: this.overviewData,
      tags: this.ctx.tagsOf('profile') || {},
      plot: (label, className = 'plot') => {
        const p = createPlot(label, { className });
        this.plots.push(p);
        return p;
      },
      rerender: () => this.renderPane(),
    };
  }

  startTimeline() {
    if (!this.timeline) {
      this.tlStatus = el('p', { class: 'muted prof-tl-status', role: 'status' });
      this.timeline = new Timeline(this.params(), { onStatus: (text, error) => { this.tlStatus.textContent = text; this.tlStatus.classList.toggle('has-errors', error); } });
      this.timelineLoad = this.timeline.load();
    }
    return this.timelineLoad;
  }

  async drawTimeline(holder) {
    const loading = this.startTimeline();
    holder.append(this.tlStatus, this.timeline.element);
    await loading;
    this.timeline.draw();
    if (this.sel.span !== 'all' && this.overviewData) {
      const step = this.overviewData.steps.find((s) => String(s.step) === this.sel.span);
      if (step) this.timeline.setWindow(step.ts, step.ts + step.dur);
    }
  }
}

// plotly.js is loaded by the panes that chart (not for the timeline, which is a canvas).
// The tab's id stays 'profiler': links carry it (?tab=profiler), as do the tab's DOM ids.
registerView(classView({ id: 'profiler', label: 'Profiler', kind: 'profile', order: 90, needsPlotly: false, View: ProfileView }));
