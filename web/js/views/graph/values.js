// "Colour by" in the graph view: nodes coloured and ranked by a value per node from
// /api/graph/values (parameters, FLOPs, an activation statistic, profiler time). The toolbar
// gets the choice (and, for profiler time, which profile; the profile's step and span come
// from the URL, as "Show in graph" sets them); the sidebar a legend (the colour
// scale with its min, max and unit) and the ranked list, whose entries select and centre
// their node. A collapsed group is coloured by its members' sum (an activation statistic:
// its output's value); the few highest drawn values are also written above their boxes.
// The drawing is coloured through canvas.setNodeStyle after each draw.
import { el, setChildren, fmtInt } from '../../shared/dom.js';
import { getJSONWhenReady } from '../../shared/api.js';
import { state } from './valuestate.js';
import { makeScale, fmtValue, unitLabel } from './valuescale.js';

const CHOICES = [
  ['', 'None'], ['params', 'Parameters'], ['flops', 'FLOPs'],
  ['activations:mean', 'Activation mean'], ['activations:std', 'Activation std'],
  ['activations:zero_fraction', 'Activation zeros'], ['profile', 'Profiler time'],
];
const SEP = '\u0000';
const SHOWN = 20; // entries of the ranked list
const BADGES = 5; // drawn boxes that show their value as text

/** Which profile a profiler-time answer is of: run / worker, the step it was logged at and,
 *  for one ProfilerStep of it, that step. */
function profileLabel(p) {
  const span = p.span && p.span !== 'all' ? `, step ${p.span} only` : '';
  return `${p.run} / ${p.worker}, profile of step ${p.step}${span}`;
}

export class GraphValues {
  /** host: {canvas(), model(), reveal(id), profiles(): {run: [profile tags]}}. */
  constructor(host) {
    this.host = host;
    this.body = null; // the /api/graph/values answer shown
    this.scale = null; // the colour scale of the drawn values (see valuescale.js)
    this.seq = 0;
    this.select = el('select', { id: 'graph-color', 'aria-label': 'Colour by', onchange: () => this.#choose() },
      CHOICES.map(([value, label]) => el('option', { value }, label)));
    this.select.value = this.#choice();
    this.profileSelect = el('select', { id: 'graph-profile', 'aria-label': 'Profile', hidden: true, onchange: () => this.#chooseProfile() });
    this.element = el('span', { class: 'graph-color' },
      el('label', { for: 'graph-color', class: 'inline' }, 'Colour by '), this.select, this.profileSelect);
    this.legend = el('div', { class: 'graph-values-legend' });
    this.list = el('div', { class: 'graph-values-top' });
    this.panel = el('section', { class: 'graph-values', 'aria-label': 'Node values', 'data-state': 'empty', hidden: true },
      el('h2', {}, 'Node values'), this.legend, this.list);
  }

  #choice() {
    const by = state.get('graph_color');
    return by === 'activations' ? `activations:${state.get('graph_stat')}` : by;
  }

  #choose() {
    const [by, stat] = this.select.value.split(':');
    state.set({ graph_color: by, graph_stat: stat || 'mean', graph_op: '' });
    this.load();
  }

  #chooseProfile() {
    const [run, worker] = this.profileSelect.value.split(SEP);
    state.set({ graph_prun: run, graph_worker: worker, graph_pstep: '', graph_pspan: 'all', graph_op: '' });
    this.load();
  }

  /** The profiles to choose from; the current one is the URL's, else the model's run's. */
  #fillProfiles() {
    const tags = this.host.profiles() || {};
    const options = Object.keys(tags).sort().flatMap((run) => tags[run].map((tag) => [`${run}${SEP}${tag}`, `${run} / ${tag}`]));
    setChildren(this.profileSelect, options.map(([value, label]) => el('option', { value }, label)));
    const model = this.host.model();
    const run = state.get('graph_prun') || (model && model.run) || '';
    const wanted = options.find(([v]) => v === `${run}${SEP}${state.get('graph_worker')}`) || options.find(([v]) => v.startsWith(`${run}${SEP}`)) || options[0];
    if (wanted) this.profileSelect.value = wanted[0];
    return wanted ? wanted[0].split(SEP) : null;
  }

  /** Fetch the values for the open model and the URL's choice, then colour and list them. */
  async load() {
    const seq = ++this.seq;
    const model = this.host.model();
    const by = state.get('graph_color');
    this.select.value = this.#choice();
    this.profileSelect.hidden = by !== 'profile';
    if (!model || !by) {
      this.body = null;
      this.panel.hidden = true;
      this.panel.dataset.state = 'empty';
      this.paint();
      return null;
    }
    const params = { model: model.id, by };
    if (by === 'activations') params.stat = state.get('graph_stat');
    if (by === 'profile') {
      const chosen = this.#fillProfiles();
      if (chosen) [params.profile_run, params.worker] = chosen;
      // the profile logged at that step (else the newest) and one of its ProfilerSteps
      if (state.get('graph_pstep') !== '') params.profile_step = state.get('graph_pstep');
      if (state.get('graph_pspan') !== 'all') params.span = state.get('graph_pspan');
      if (state.get('graph_op')) params.op = state.get('graph_op');
    }
    this.panel.hidden = false;
    this.panel.dataset.state = 'loading';
    setChildren(this.legend, el('p', { class: 'muted' }, 'Loading…'));
    setChildren(this.list);
    try {
      const body = await getJSONWhenReady('api/graph/values', params);
      if (seq !== this.seq) return null;
      this.body = body;
      this.paint();
      this.#renderList();
      this.panel.dataset.state = 'ready';
      if (body.op_nodes && body.op_nodes.length) await this.host.reveal(body.op_nodes[0].id);
      return body;
    } catch (err) {
      if (seq !== this.seq) return null;
      this.body = null;
      this.paint();
      this.panel.dataset.state = 'error';
      setChildren(this.legend, el('p', { class: 'graph-error', role: 'alert' }, err.message));
      return null;
    }
  }

  /** Colour the drawn boxes (again after every draw); the scale spans the drawn values. */
  paint() {
    const canvas = this.host.canvas();
    if (!canvas.data) return;
    if (!this.body) {
      if (this.scale) canvas.setNodeStyle(null); // (a fresh drawing has its own colours)
      this.scale = null;
      return;
    }
    const drawn = new Map();
    for (const item of canvas.data.nodes) {
      const v = item.id.startsWith('g:') ? this.body.groups[item.id] : this.body.nodes[item.id];
      if (v !== undefined && v !== null) drawn.set(item.id, v);
    }
    this.scale = makeScale([...drawn.values()]);
    // the few highest drawn values are written on their boxes too
    const badged = new Set([...drawn].sort((a, b) => b[1] - a[1]).slice(0, BADGES).map(([id]) => id));
    canvas.setNodeStyle(new Map([...drawn].map(([id, v]) => [id, {
      fill: this.scale.color(v), badge: badged.has(id) ? fmtValue(v, this.body.unit) : null }])));
    this.#renderLegend();
  }

  #renderLegend() {
    const b = this.body;
    const s = this.scale;
    const missing = b.missing.length;
    setChildren(this.legend,
      el('p', { class: 'graph-values-label' }, b.label, b.profile ? ` — ${profileLabel(b.profile)}` : ''),
      el('div', { class: 'graph-values-bar', role: 'img', 'aria-label': `Colour scale from ${fmtValue(s.lo, b.unit)} to ${fmtValue(s.hi, b.unit)}`, style: { background: s.gradient } }),
      el('div', { class: 'graph-values-range' },
        el('span', { class: 'min', dataset: { value: String(s.lo) } }, fmtValue(s.lo, b.unit)),
        el('span', { class: 'unit' }, `${unitLabel(b.unit)}${s.log ? ', log scale' : ''}`),
        el('span', { class: 'max', dataset: { value: String(s.hi) } }, fmtValue(s.hi, b.unit))),
      b.total !== null && b.total !== undefined ? el('p', { class: 'muted' }, `Total ${fmtValue(b.total, b.unit)}`) : null,
      missing ? el('p', { class: 'muted graph-values-missing' }, `${fmtInt(missing)} ops without a value (drawn in their category colour)`) : null,
      b.unmapped_us ? el('p', { class: 'muted' }, `${fmtValue(b.unmapped_us, 'us')} per step outside the graph (${b.unmapped.slice(0, 3).map((u) => u.name).join(', ')}…)`) : null,
      ...(b.notes || []).map((n) => el('p', { class: 'muted' }, n)));
  }

  #renderList() {
    const b = this.body;
    const entry = (item, value) => el('li', {},
      el('button', { type: 'button', class: 'linkish', dataset: { id: item.id }, onclick: () => this.host.reveal(item.id) },
        item.name || item.id),
      el('span', { class: 'muted' }, ` ${item.op_type || ''} `),
      el('span', { class: 'value' }, fmtValue(value, b.unit)));
    const parts = [];
    if (b.op_nodes) {
      parts.push(el('h3', {}, `Nodes of ${b.op}`),
        b.op_nodes.length
          ? el('ol', { class: 'graph-values-op' }, b.op_nodes.map((n) => entry(n, n.us)))
          : el('p', { class: 'muted' }, `No node of this graph ran ${b.op}.`));
    }
    parts.push(el('h3', {}, `Top ${Math.min(SHOWN, b.top.length)} by ${b.label.toLowerCase()}`),
      el('ol', { class: 'graph-values-ranked' }, b.top.slice(0, SHOWN).map((t) => entry(t, t.value))));
    setChildren(this.list, parts);
  }
}
