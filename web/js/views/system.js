// The System dashboard: per run, the machine's state while it trained (CPU, memory, disk,
// network, GPUs; one group of charts per host) on the wall-time axis, under one training
// curve drawn on the same axis. Hovering a training point reads the machine's state at that
// point's wall time from the server (/api/system/at) into a readout under the curve and
// marks the time on every chart of the run, so a loss spike can be matched to what the
// machine was doing then.
/* global Plotly */
import { registerView, classView } from '../shared/views.js';
import { getJSON } from '../shared/api.js';
import * as state from '../shared/state.js';
import { baseLayout, axis, PLOT_CONFIG, plotlyText, plotlyReady } from '../shared/plot.js';
import { el, setChildren, ensureStylesheet } from '../shared/dom.js';
import { colorOf } from '../shared/colors.js';
import { fmtWall, showName } from '../shared/format.js';

state.declare('systag', '');

const POINTS = 600;
// Charts of a host: metrics of one unit drawn together; any other metric gets its own.
const GROUPS = [
  { id: 'cpu', title: 'CPU (%)', re: /^(cpu\/percent|process\/cpu_percent)$/ },
  { id: 'memory', title: 'Memory', re: /^(memory\/used_bytes|process\/rss_bytes)$/ },
  { id: 'disk-io', title: 'Disk read / written since start', re: /^disk\/(read|write)_bytes$/ },
  { id: 'network', title: 'Network sent / received since start', re: /^network\// },
  { id: 'gpu-util', title: 'GPU utilization (%)', re: /^gpu\d+\/utilization_percent$/ },
  { id: 'gpu-memory', title: 'GPU memory used', re: /^gpu\d+\/memory_used_bytes$/ },
  { id: 'gpu-power', title: 'GPU power (W)', re: /^gpu\d+\/power_watts$/ },
  { id: 'gpu-temp', title: 'GPU temperature (°C)', re: /^gpu\d+\/temperature_c$/ },
  { id: 'gpu-clock', title: 'GPU clocks (MHz)', re: /^gpu\d+\/\w+_clock_mhz$/ },
];
const HIDDEN = /^gpu\d+\/memory_total_bytes$/; // shown in the readout, not charted

/** A metric's value for people: bytes in GiB/MiB, percents, watts, degrees, MHz. */
export function fmtMetric(metric, v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return String(v);
  if (metric.endsWith('_bytes')) {
    const gib = v / 2 ** 30;
    return gib >= 1 ? `${gib.toFixed(2)} GiB` : `${(v / 2 ** 20).toFixed(1)} MiB`;
  }
  if (metric.endsWith('percent')) return `${v.toFixed(1)} %`;
  if (metric.endsWith('_watts')) return `${v.toFixed(1)} W`;
  if (metric.endsWith('_c')) return `${v.toFixed(0)} °C`;
  if (metric.endsWith('_mhz')) return `${v.toFixed(0)} MHz`;
  return String(Number(v.toPrecision(6)));
}

/** The host's series grouped into charts: [{id, title, series: [...]}]. */
export function chartsOf(series) {
  const charts = GROUPS.map((g) => ({ ...g, series: [] }));
  const own = [];
  for (const s of series) {
    if (HIDDEN.test(s.metric)) continue;
    const group = charts.find((g) => g.re.test(s.metric));
    if (group) group.series.push(s);
    else own.push({ id: s.metric.replace(/\W+/g, '-'), title: s.metric, series: [s] });
  }
  return [...charts.filter((g) => g.series.length), ...own];
}

const num = (v) => (typeof v === 'number' ? v : Number(v));
const dates = (walls) => walls.map((t) => new Date(t * 1000));

/** Bytes are drawn in GiB or MiB (as the readout shows them), by the chart's largest value. */
function byteUnit(series) {
  const top = Math.max(0, ...series.flatMap((s) => s.values.map(num).filter(Number.isFinite)));
  return top >= 2 ** 30 ? ['GiB', 2 ** 30] : ['MiB', 2 ** 20];
}

function layoutFor(title, range, line) {
  return baseLayout({
    uirevision: 'system', // a redraw with new data keeps the user's zoom
    shapes: line ? [line] : [],
    height: 190,
    margin: { l: 64, r: 12, t: 24, b: 32 },
    title: { text: plotlyText(title), font: { size: 12 }, x: 0.01, y: 0.97 },
    xaxis: axis({ type: 'date', range }),
    yaxis: axis({ exponentformat: 'SI' }),
    hovermode: 'x unified',
    showlegend: true,
    legend: { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom', xanchor: 'left', font: { size: 10 } },
  });
}

class SystemView {
  constructor(ctx) {
    this.ctx = ctx;
    this.seq = 0;
    this.sections = new Map(); // run -> {plots: [div], readout}
    ensureStylesheet('system-css', 'static/css/system.css');
    this.select = el('select', { name: 'system-tag', 'aria-label': 'Training curve',
      onchange: () => { state.set({ systag: this.select.value }); this.render(); } });
    setChildren(ctx.settings, el('h2', {}, 'System'),
      el('label', { class: 'control' }, 'Training curve ', this.select),
      el('p', { class: 'muted' }, 'Hover a point of the training curve to see the machine then.'));
    this.render();
  }

  runs() {
    const listed = this.ctx.tagsOf('system');
    return this.ctx.runs.active().filter((r) => r in listed);
  }

  /** The training tag to draw: the one chosen, else the first training "loss" tag (not an
   *  evaluation one: eval/loss sorts before train/loss), else any loss, else the first. */
  trainingTag(runs) {
    const scalars = this.ctx.tagsOf('scalar');
    const tags = [...new Set(runs.flatMap((r) => scalars[r] || []))].sort();
    const chosen = state.get('systag');
    const losses = tags.filter((t) => /loss/i.test(t));
    const evaluation = /(^|[/_.])(eval|evaluation|val|valid|validation|test)([/_.]|$)/i;
    const tag = tags.includes(chosen) ? chosen
      : losses.find((t) => !evaluation.test(t)) || losses[0] || tags[0] || '';
    setChildren(this.select, ...tags.map((t) => el('option', { value: t, selected: t === tag }, showName(t))));
    this.select.disabled = !tags.length;
    return tag;
  }

  async render() {
    const seq = (this.seq += 1);
    const runs = this.runs();
    const tag = this.trainingTag(runs);
    if (!runs.length) {
      this.clear();
      setChildren(this.ctx.main, el('p', { class: 'empty' }, 'No selected run has system metrics.'));
      return;
    }
    let loaded;
    try {
      loaded = await Promise.all(runs.map((run) => this.load(run, tag)));
    } catch (err) {
      if (seq === this.seq) setChildren(this.ctx.main, el('p', { class: 'empty', role: 'alert' }, err.message));
      return;
    }
    if (seq !== this.seq || !plotlyReady()) return;
    // new data for the same sections (a live run): redraw in place, keeping zoom and readout
    const shape = JSON.stringify(loaded.map((d) => [d.run, d.training ? d.tag : null,
      d.hosts.map((h) => [h.host, chartsOf(h.series).map((c) => c.id)])]));
    if (shape !== this.shape) {
      this.clear();
      this.shape = shape;
      setChildren(this.ctx.main, ...loaded.map((data) => this.section(data)));
    }
    for (const data of loaded) await this.draw(data);
  }

  /** Zooming or panning one chart of a run moves the others with it (one time axis). */
  syncZoom(run, div) {
    if (div.vdlSynced) return;
    div.vdlSynced = true;
    div.on('plotly_relayout', (event) => {
      const parts = this.sections.get(run);
      if (!parts || parts.syncing || !event) return;
      const r0 = event['xaxis.range[0]'] ?? (event['xaxis.range'] || [])[0];
      const r1 = event['xaxis.range[1]'] ?? (event['xaxis.range'] || [])[1];
      const update = r0 !== undefined && r1 !== undefined ? { 'xaxis.range': [r0, r1] }
        : event['xaxis.autorange'] ? { 'xaxis.range': parts.range } : null;
      if (!update) return;
      parts.syncing = true;
      Promise.all(parts.plots.filter((p) => p !== div && p.data).map((p) => Plotly.relayout(p, update)))
        .finally(() => { parts.syncing = false; });
    });
  }

  async load(run, tag) {
    const overview = await getJSON('api/system', { run });
    const hosts = await Promise.all(overview.hosts.map((h) => getJSON('api/system/series',
      { run, host: h.host, points: POINTS })));
    const hasTag = tag && (this.ctx.tagsOf('scalar')[run] || []).includes(tag);
    const training = hasTag ? await getJSON('api/scalars', { run, tag, points: POINTS }) : null;
    const walls = [...hosts.flatMap((h) => h.series.flatMap((s) => s.wall_times)),
      ...(training ? training.wall_times : [])].map(num).filter(Number.isFinite);
    const range = walls.length ? [new Date(Math.min(...walls) * 1000), new Date(Math.max(...walls) * 1000)] : undefined;
    return { run, tag, overview, hosts, training, range };
  }

  section(data) {
    const { run, overview } = data;
    const peak = overview.gpu_memory_peak;
    const readout = el('div', { class: 'system-readout', 'aria-live': 'polite' },
      data.training ? 'Hover a training point to see the machine’s state then.' : 'This run has no such training curve.');
    const train = el('div', { class: 'system-plot system-train', 'aria-label': `${data.tag} of run ${run} by wall time` });
    const hosts = data.hosts.map((h) => el('div', { class: 'system-host', dataset: { host: h.host } },
      el('h4', {}, showName(h.host)),
      el('div', { class: 'system-grid' }, ...chartsOf(h.series).map((c) => el('div', {
        class: 'system-plot', dataset: { chart: c.id, host: h.host }, role: 'img', 'aria-label': `${c.title} on ${h.host}`,
      })))));
    const node = el('section', { class: 'system-run', dataset: { run } },
      el('h3', {}, el('span', { class: 'swatch', style: { background: colorOf(run) } }), showName(run),
        el('span', { class: 'muted system-peak', hidden: peak === null })),
      data.training ? train : null, readout, ...hosts);
    this.sections.set(run, { node, train, readout, range: data.range, plots: [...node.querySelectorAll('.system-plot')] });
    return node;
  }

  async draw(data) {
    const parts = this.sections.get(data.run);
    parts.range = data.range;
    const peak = data.overview.gpu_memory_peak;
    const peakNode = parts.node.querySelector('.system-peak');
    peakNode.hidden = peak === null;
    peakNode.textContent = peak === null ? '' : ` · GPU memory peak ${fmtMetric('x_bytes', peak)}`;
    if (data.training) await this.drawTraining(data, parts);
    for (const host of data.hosts) {
      for (const chart of chartsOf(host.series)) {
        const div = parts.node.querySelector(`.system-plot[data-chart="${chart.id}"][data-host="${CSS.escape(host.host)}"]`);
        const bytes = chart.series.every((s) => s.metric.endsWith('_bytes'));
        const [unit, scale] = bytes ? byteUnit(chart.series) : ['', 1];
        const traces = chart.series.map((s) => ({
          type: 'scatter', mode: 'lines', name: plotlyText(s.metric), x: dates(s.wall_times.map(num)),
          y: s.values.map((v) => num(v) / scale),
          hovertemplate: `%{y:.4~f} ${unit}<extra>${plotlyText(s.metric)}</extra>`,
          meta: { metric: s.metric },
        }));
        const title = unit ? `${chart.title} (${unit})` : chart.title;
        await Plotly.react(div, traces, layoutFor(title, data.range, parts.line), PLOT_CONFIG);
        this.syncZoom(data.run, div);
      }
    }
  }

  async drawTraining(data, parts) {
    const t = data.training;
    const walls = t.wall_times.map(num);
    const trace = {
      type: 'scatter', mode: 'lines+markers', marker: { size: 4 }, line: { color: colorOf(data.run) },
      name: plotlyText(data.tag), x: dates(walls), y: t.values.map(num),
      customdata: walls.map((w, i) => [w, t.steps[i]]),
      hovertemplate: `step %{customdata[1]}: %{y}<extra>${plotlyText(data.tag)}</extra>`,
    };
    const layout = layoutFor(`${data.tag} (training)`, data.range, null);
    layout.hovermode = 'closest';
    layout.height = 220;
    await Plotly.react(parts.train, [trace], layout, PLOT_CONFIG);
    this.syncZoom(data.run, parts.train);
    if (!parts.train.vdlHooked) {
      parts.train.vdlHooked = true;
      parts.train.on('plotly_hover', (event) => {
        const point = event && event.points && event.points[0];
        if (point && point.customdata) this.showAt(data.run, point.customdata[0], point.customdata[1]);
      });
    }
  }

  /** The machine's state at `wall` (a training point's wall time) into the run's readout,
   *  and a line at that time on each of its charts. */
  async showAt(run, wall, step) {
    const parts = this.sections.get(run);
    if (!parts) return;
    const token = (parts.token = (parts.token || 0) + 1);
    const at = await getJSON('api/system/at', { run, wall_time: wall });
    if (token !== parts.token || this.sections.get(run) !== parts) return;
    parts.readout.dataset.wallTime = String(wall);
    parts.readout.dataset.step = String(step);
    setChildren(parts.readout,
      el('p', { class: 'system-at' }, `Step ${step} at ${fmtWall(wall)}`),
      ...at.hosts.map((h) => el('dl', { class: 'system-state', dataset: { host: h.host } },
        el('dt', { class: 'system-state-host' }, showName(h.host)),
        ...Object.entries(h.metrics).map(([metric, s]) => el('div', {
          class: 'system-metric', dataset: { metric, value: String(s.value), sampled: String(s.wall_time) },
          title: `sampled at ${fmtWall(s.wall_time)}`,
        }, el('dt', {}, metric), el('dd', {}, fmtMetric(metric, num(s.value))))))));
    const line = { type: 'line', xref: 'x', yref: 'paper', x0: new Date(wall * 1000), x1: new Date(wall * 1000),
      y0: 0, y1: 1, line: { width: 1, dash: 'dot', color: colorOf(run) } };
    parts.line = line; // kept by redraws
    for (const div of parts.plots) if (div !== parts.train && div.data) Plotly.relayout(div, { shapes: [line] });
  }

  clear() {
    for (const parts of this.sections.values()) {
      for (const div of parts.plots) if (plotlyReady() && div.data) Plotly.purge(div);
    }
    this.sections.clear();
    this.shape = null;
  }

  update(change) {
    if (change.data || change.runs) this.render();
  }

  destroy() {
    this.seq += 1;
    this.clear();
  }
}

registerView(classView({ id: 'system', label: 'System', kind: 'system', order: 15, View: SystemView }));
