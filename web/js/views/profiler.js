// The profiler dashboard: where a training step's time goes, for our traces and PyTorch's.
// Pick a run, a worker (tag), a profile and a span (all steps or one); then
//   Overview  — each step's wall time split into phases (a stacked bar per step) + environment
//   Operators — calls, self/total time, mean, share of step; by name or name + input shapes
//   Kernels   — the same for GPU kernels (when the trace has them)
//   Timeline  — threads and GPU streams on a canvas (see profiler_timeline.js)
//   Memory    — allocated bytes over time per device, the peak, the ops allocating most
//   Compare   — two profiles' (or spans') operator tables side by side with differences
// and a download link for the raw trace (open it in Perfetto). Every request is relative
// (api/profile/...), so the app works behind a path prefix.
import { registerView, classView } from '../shared/views.js';
import { el, setChildren, uid, debounce } from '../shared/dom.js';
import { baseLayout, axis, plotlyText, loadPlotly } from '../shared/plot.js';
import { createPlot } from '../shared/plotcard.js';
import { Timeline, fmtTime, getJSON } from './profiler_timeline.js';
import { SortTable, fmtUs, fmtPct, fmtBytesSigned } from './profiler_tables.js';

const PANES = [
  ['overview', 'Overview'],
  ['operators', 'Operators'],
  ['kernels', 'Kernels'],
  ['timeline', 'Timeline'],
  ['memory', 'Memory'],
  ['compare', 'Compare'],
];
const PHASE_COLORS = {
  data: '#8c6bb1', forward: '#4e79a7', backward: '#f28e2b', optimizer: '#59a14f', compile: '#e15759',
  kernel: '#76b7b2', memcpy: '#edc948', runtime: '#b07aa1', other: '#bab0ac',
};

function ensureCss() {
  if (document.getElementById('profiler-css')) return;
  document.head.append(el('link', { id: 'profiler-css', rel: 'stylesheet', href: 'static/css/profiler.css' }));
}

function select(label, name, onChange) {
  const id = uid('prof');
  const node = el('select', { id, name, onchange: () => onChange(node.value) });
  return { node, field: el('div', { class: 'prof-field' }, el('label', { for: id }, label), node) };
}

function fillSelect(sel, options, value) {
  setChildren(sel, options.map(([v, text]) => el('option', { value: v }, text)));
  if (options.some(([v]) => v === value)) sel.value = value;
  return sel.value;
}

const MAX_BARS = 300;

/** At most MAX_BARS rows: consecutive steps grouped, each group's mean per phase (a trace
 *  of 20,000 steps would otherwise be 20,000 bars and table rows). */
function bucketSteps(steps, phases) {
  if (steps.length <= MAX_BARS) return steps.map((s) => ({ ...s, label: `step ${s.step}` }));
  const size = Math.ceil(steps.length / MAX_BARS);
  const out = [];
  for (let i = 0; i < steps.length; i += size) {
    const group = steps.slice(i, i + size);
    const parts = {};
    for (const ph of phases) parts[ph] = group.reduce((a, s) => a + s.parts[ph], 0) / group.length;
    out.push({ step: group[0].step, label: `steps ${group[0].step}–${group[group.length - 1].step}`, parts,
      dur: group.reduce((a, s) => a + s.dur, 0) / group.length });
  }
  return out;
}

class ProfilerView {
  constructor(ctx) {
    ensureCss();
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
    const index = await getJSON('api/profile', { run, tag });
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
      this.overviewData = await getJSON('api/profile/overview', p);
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
    const panes = PANES.filter(([id]) => id !== 'kernels' || this.hasGpu());
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
    try {
      if (pane === 'overview') await this.drawOverview(holder);
      else if (pane === 'operators') await this.drawOperators(holder, 'operators');
      else if (pane === 'kernels') await this.drawOperators(holder, 'kernels');
      else if (pane === 'timeline') await this.drawTimeline(holder);
      else if (pane === 'memory') await this.drawMemory(holder);
      else if (pane === 'compare') await this.drawCompare(holder);
      holder.dataset.state = 'ready';
    } catch (err) {
      setChildren(holder, el('p', { class: 'empty prof-error', role: 'alert' }, err.message));
      holder.dataset.state = 'error';
    }
  }

  plot(label, className = 'plot') {
    const p = createPlot(label, { className });
    this.plots.push(p);
    return p;
  }

  async drawOverview(holder) {
    const o = this.overviewData;
    const used = o.phases.filter((ph) => o.totals[ph] > 0);
    const plot = this.plot('Step time by phase, stacked per step');
    const rows = bucketSteps(o.steps, o.phases);
    const x = rows.map((s) => s.label);
    const traces = used.map((ph) => ({
      type: 'bar',
      name: o.labels[ph],
      x,
      y: rows.map((s) => s.parts[ph] / 1000),
      marker: { color: PHASE_COLORS[ph] },
      meta: { phase: ph },
      hovertemplate: `${plotlyText(o.labels[ph])}: %{y:.3f} ms<extra>%{x}</extra>`,
    }));
    const steps = el('table', { class: 'prof-table prof-steps' },
      el('caption', {}, rows.length < o.steps.length ? `Per step (ms; mean of each group of ${o.steps.length.toLocaleString('en-US')} steps)` : 'Per step (ms)'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Step'), el('th', { scope: 'col', class: 'num' }, 'Wall'),
        used.map((ph) => el('th', { scope: 'col', class: 'num' }, o.labels[ph])))),
      el('tbody', {}, rows.map((s) => el('tr', { dataset: { step: String(s.step) } }, el('th', { scope: 'row' }, s.label.replace(/^steps? /, '')),
        el('td', { class: 'num', dataset: { key: 'dur' } }, (s.dur / 1000).toFixed(3)),
        used.map((ph) => el('td', { class: 'num', dataset: { key: ph } }, (s.parts[ph] / 1000).toFixed(3)))))));
    const env = o.environment;
    const envRows = Object.entries(env.fields).map(([k, v]) => [k, String(v)]);
    envRows.push(['traced threads', env.threads.join(', ')]);
    env.devices.forEach((d, i) => envRows.push([`device ${i}`, typeof d === 'object' ? Object.entries(d).map(([k, v]) => `${k}: ${v}`).join(', ') : String(d)]));
    const envTable = el('table', { class: 'prof-kv prof-env' }, el('caption', {}, 'Environment'),
      el('tbody', {}, envRows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))));
    if (!o.steps.length) holder.append(el('p', { class: 'muted' }, 'This trace marks no steps (ProfilerStep#N): use the operator table and timeline.'));
    holder.append(el('section', { class: 'card' }, el('h3', {}, 'Step time breakdown'), plot.element), steps, envTable);
    if (o.steps.length) {
      await loadPlotly();
      plot.draw(traces, baseLayout({ barmode: 'stack', showlegend: true, legend: { orientation: 'h', y: 1.12 }, margin: { l: 56, r: 12, t: 40, b: 40 },
        xaxis: axis({ type: 'category' }), yaxis: axis({ title: { text: 'ms' } }) }));
    }
  }

  async drawOperators(holder, which) {
    const group = this.sel.group || 'name';
    const q = { ...this.params(), span: this.sel.span };
    if (which === 'operators') q.group = group;
    const data = await getJSON(`api/profile/${which}`, q);
    const cols = [
      { key: 'name', label: which === 'kernels' ? 'Kernel' : 'Operator' },
      ...(data.group === 'shapes' ? [{ key: 'shapes', label: 'Input shapes' }] : []),
      { key: 'calls', label: 'Calls', numeric: true, fmt: (v) => v.toLocaleString('en-US') },
      { key: 'self', label: 'Self', numeric: true, fmt: fmtUs },
      { key: 'total', label: 'Total', numeric: true, fmt: fmtUs },
      { key: 'mean', label: 'Mean', numeric: true, fmt: fmtUs },
      { key: 'self_share', label: 'Self % of step', numeric: true, fmt: fmtPct },
      { key: 'total_share', label: 'Total % of step', numeric: true, fmt: fmtPct },
    ];
    const table = new SortTable({ columns: cols, caption: `${which === 'kernels' ? 'Kernels' : 'Operators'} (${data.span === 'all' ? 'all steps' : `step ${data.span}`})`, sortKey: 'self',
      rowKey: (r) => (r.shapes !== undefined ? `${r.name} ${r.shapes}` : r.name) });
    table.setRows(data.rows);
    const searchId = uid('prof');
    const search = el('input', { id: searchId, type: 'search', name: `${which}-search`, placeholder: 'name contains…', oninput: debounce(() => table.setFilter(search.value), 100) });
    const topId = uid('prof');
    const topN = el('input', { id: topId, type: 'number', min: '1', max: '100', value: String(this.sel.topN || 10), name: 'top-n', onchange: () => {
      this.sel.topN = Math.max(1, Math.min(100, Number(topN.value) || 10));
      drawTop();
    } });
    const controls = [el('label', { for: searchId }, 'Search '), search, el('label', { for: topId }, ' Top N '), topN];
    if (which === 'operators') {
      const groupId = uid('prof');
      const groupSel = el('select', { id: groupId, name: 'group', onchange: () => {
        this.sel.group = groupSel.value;
        this.renderPane();
      } }, el('option', { value: 'name' }, 'name'), el('option', { value: 'shapes' }, 'name + input shapes'));
      groupSel.value = group;
      controls.push(el('label', { for: groupId }, ' Group by '), groupSel);
    }
    const plot = this.plot(`Top ${which} by self time`);
    holder.append(el('div', { class: 'prof-controls' }, controls),
      el('p', { class: 'muted' }, `${data.rows.length} rows · step time ${fmtUs(data.step_time)}`),
      el('section', { class: 'card' }, el('h3', {}, `Top ${which} by self time`), plot.element), table.element);
    await loadPlotly();
    const drawTop = () => {
      const n = this.sel.topN || 10;
      const top = [...data.rows].sort((a, b) => b.self - a.self).slice(0, n).reverse();
      if (!top.length) return;
      plot.element.style.height = `${Math.max(200, 24 * top.length + 60)}px`;
      plot.draw([{ type: 'bar', orientation: 'h', x: top.map((r) => r.self / 1000), y: top.map((r, i) => `${plotlyText(r.name)}${r.shapes ? ` ${plotlyText(r.shapes)}` : ''}#${i}`),
        marker: { color: '#4e79a7' }, hovertemplate: '%{x:.3f} ms<extra></extra>' }],
      baseLayout({ margin: { l: 260, r: 12, t: 8, b: 40 },
        xaxis: axis({ title: { text: 'self time (ms)' } }), yaxis: axis({ automargin: true, tickmode: 'array', tickvals: top.map((r, i) => `${plotlyText(r.name)}${r.shapes ? ` ${plotlyText(r.shapes)}` : ''}#${i}`), ticktext: top.map((r) => plotlyText(r.name).slice(0, 40)) }) }));
    };
    drawTop();
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

  async drawMemory(holder) {
    const data = await getJSON('api/profile/memory', this.params());
    if (!data.devices.length) {
      holder.append(el('p', { class: 'empty' }, 'This trace has no memory events (profile with profile_memory=True).'));
      return;
    }
    const plot = this.plot('Allocated memory over time per device');
    holder.append(el('section', { class: 'card' }, el('h3', {}, 'Allocated memory'), plot.element));
    const peaks = el('ul', { class: 'prof-peaks' }, data.devices.map((d) => el('li', { dataset: { device: d.device, peak: String(d.peak) } },
      `${d.device}: peak ${fmtBytesSigned(d.peak)} at ${fmtTime(d.peak_ts - data.t0)} (${d.events.toLocaleString('en-US')} events)`)));
    holder.append(peaks);
    const table = new SortTable({ caption: 'Operators that allocate most', sortKey: 'bytes', columns: [
      { key: 'name', label: 'Operator' },
      { key: 'bytes', label: 'Allocated', numeric: true, fmt: fmtBytesSigned },
      { key: 'allocations', label: 'Allocations', numeric: true, fmt: (v) => v.toLocaleString('en-US') },
    ] });
    table.setRows(data.top_ops);
    holder.append(table.element);
    await loadPlotly();
    plot.draw(data.devices.map((d) => ({ type: 'scatter', mode: 'lines', line: { shape: 'hv' }, name: plotlyText(d.device),
      x: d.ts.map((t) => (t - data.t0) / 1000), y: d.allocated, meta: { device: d.device } })),
    baseLayout({ showlegend: true, xaxis: axis({ title: { text: 'time (ms)' } }), yaxis: axis({ title: { text: 'bytes allocated' } }) }));
  }

  async drawCompare(holder) {
    const tags = this.ctx.tagsOf('profile') || {};
    const b = this.sel.compare || { run: this.sel.run, tag: this.sel.tag, step: this.sel.step, span: 'all' };
    this.sel.compare = b;
    const runSel = select('B: run', 'compare-run', (v) => { b.run = v; b.tag = (tags[v] || [])[0] || ''; b.step = ''; this.renderPane(); });
    const tagSel = select('B: worker', 'compare-tag', (v) => { b.tag = v; b.step = ''; this.renderPane(); });
    const stepSel = select('B: profile', 'compare-step', (v) => { b.step = v; this.renderPane(); });
    const spanSel = select('B: span', 'compare-span', (v) => { b.span = v; this.renderPane(); });
    b.run = fillSelect(runSel.node, Object.keys(tags).sort().map((r) => [r, r]), b.run);
    b.tag = fillSelect(tagSel.node, (tags[b.run] || []).map((t) => [t, t]), b.tag);
    const index = await getJSON('api/profile', { run: b.run, tag: b.tag });
    b.step = fillSelect(stepSel.node, index.steps.map((s) => [String(s), `step ${s}`]).reverse(), b.step);
    let spans = [['all', 'All steps']];
    try {
      const ov = await getJSON('api/profile/overview', { run: b.run, tag: b.tag, step: b.step });
      spans = spans.concat(ov.summary.steps.map((s) => [String(s), `Step ${s}`]));
    } catch (_) { /* the comparison below reports the error */ }
    b.span = fillSelect(spanSel.node, spans, b.span);
    holder.append(el('p', { class: 'muted' }, `A: ${this.sel.run} / ${this.sel.tag} (${this.sel.span === 'all' ? 'all steps' : `step ${this.sel.span}`}), chosen on the left.`),
      el('div', { class: 'prof-controls' }, runSel.field, tagSel.field, stepSel.field, spanSel.field));
    const data = await getJSON('api/profile/compare', { ...this.params(), span: this.sel.span, run2: b.run, tag2: b.tag, step2: b.step, span2: b.span });
    const side = (s, k) => (r) => (r[s] ? r[s][k] : null);
    const signed = (v) => `${v > 0 ? '+' : ''}${fmtUs(v)}`;
    const table = new SortTable({ caption: 'Operators, A against B (B − A)', sortKey: 'diff_self', columns: [
      { key: 'name', label: 'Operator' },
      { key: 'a_calls', label: 'A calls', numeric: true, value: side('a', 'calls'), fmt: (v) => (v ?? '—') },
      { key: 'a_self', label: 'A self', numeric: true, value: side('a', 'self'), fmt: fmtUs },
      { key: 'b_calls', label: 'B calls', numeric: true, value: side('b', 'calls'), fmt: (v) => (v ?? '—') },
      { key: 'b_self', label: 'B self', numeric: true, value: side('b', 'self'), fmt: fmtUs },
      { key: 'diff_self', label: 'Δ self', numeric: true, value: (r) => r.diff_self, fmt: signed },
      { key: 'diff_calls', label: 'Δ calls', numeric: true, fmt: (v) => `${v > 0 ? '+' : ''}${v}` },
    ] });
    table.sortKey = 'diff_self';
    table.rows = data.rows;
    table.sorted = function sortedByAbs() {
      const key = this.sortKey;
      if (key !== 'diff_self') return SortTable.prototype.sorted.call(this);
      const sign = this.descending ? -1 : 1;
      return this.rows.filter((r) => !this.filter || r.name.toLowerCase().includes(this.filter))
        .sort((x, y) => sign * (Math.abs(x.diff_self) - Math.abs(y.diff_self)));
    };
    table.render();
    holder.append(el('p', { class: 'muted' }, `Step time: A ${fmtUs(data.step_time.a)}, B ${fmtUs(data.step_time.b)}`), table.element);
  }
}

// plotly.js is loaded by the panes that chart (not for the timeline, which is a canvas)
registerView(classView({ id: 'profiler', label: 'Profiler', kind: 'profile', order: 90, needsPlotly: false, View: ProfilerView }));
