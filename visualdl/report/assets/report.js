// A visualdl report: draws the embedded data with the inlined plotly.js. No module, no
// fetch: everything the page needs is in this file. Charts are drawn a few at a time so
// that the first shows at once; toggling a run and the smoothing slider restyle them all.
/* global Plotly */
(function main() {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  // The dashboard's run colors (web/js/shared/colors.js): a hash of the name picks a slot,
  // probing to the least used one, over the runs in sorted order.
  const PALETTE = [
    '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf',
    '#bcbd22', '#7f7f7f', '#3366cc', '#dc3912', '#0099c6', '#dd4477', '#66aa00', '#b82e2e',
    '#316395', '#994499', '#22aa99', '#aaaa11', '#6633cc', '#e67300', '#8b0707', '#5574a6',
  ];
  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i += 1) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }
  const slots = new Map();
  const used = PALETTE.map(() => 0);
  for (const run of [...data.runs].sort()) {
    const start = hash(run) % PALETTE.length;
    const least = Math.min(...used);
    let slot = start;
    for (let k = 0; k < PALETTE.length; k += 1) {
      if (used[(start + k) % PALETTE.length] === least) {
        slot = (start + k) % PALETTE.length;
        break;
      }
    }
    slots.set(run, slot);
    used[slot] += 1;
  }
  const color = (i) => PALETTE[slots.get(data.runs[i])];
  const runOn = data.runs.map(() => true);
  let smoothing = data.smoothing;
  const drawn = []; // {div, kind}
  const root = document.getElementById('report');
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'text') node.textContent = v; else node.setAttribute(k, v);
    }
    children.forEach((c) => node.append(c));
    return node;
  };
  const fmt = (n) => n.toLocaleString('en-US');

  function decode(col) {
    const bin = atob(col.b);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i += 1) bytes[i] = bin.charCodeAt(i);
    const Type = { i4: Int32Array, f4: Float32Array, f8: Float64Array }[col.t];
    return Array.from(new Type(bytes.buffer));
  }

  // the scalars page's EMA, debiased (web/js/views/scalars/chart.js)
  function smooth(values, weight) {
    if (!(weight > 0)) return values.slice();
    const out = new Array(values.length);
    let last = 0;
    let n = 0;
    for (let i = 0; i < values.length; i += 1) {
      const v = values[i];
      if (!Number.isFinite(v)) { out[i] = v; continue; }
      last = last * weight + (1 - weight) * v;
      n += 1;
      out[i] = last / (1 - weight ** n);
    }
    return out;
  }

  const LAYOUT = {
    margin: { l: 50, r: 10, t: 30, b: 35 }, hovermode: 'closest', showlegend: false,
    xaxis: { title: { text: 'step' } },
  };
  const CONFIG = { responsive: true, displaylogo: false };

  const SERIES = data.scalars.series;
  function seriesOf(i) {
    const s = SERIES[i];
    s.xs = s.xs || decode(s.x);
    s.ys = s.ys || decode(s.y);
    return s;
  }

  function rgba(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
  }

  // a group: its band (lower, then upper filled down to it) and its centre line
  function groupTraces(group) {
    const c = color(group.members[0]);
    const x = decode(group.x);
    const base = { type: 'scatter', mode: 'lines', x, meta: { run: -1, role: 'group' } };
    return [
      { ...base, y: decode(group.lo), line: { width: 0 }, hoverinfo: 'skip' },
      { ...base, y: decode(group.hi), line: { width: 0 }, fill: 'tonexty', fillcolor: rgba(c, 0.2),
        hoverinfo: 'skip' },
      { ...base, y: decode(group.c), name: `${group.name} (${group.members.length} runs)`,
        line: { color: c, width: 2 }, meta: { run: -1, role: 'group-center' },
        hovertemplate: '%{fullData.name}<br>step %{x}<br>%{y:.7~g}<extra></extra>' },
    ];
  }

  function scalarTraces(chart) {
    const traces = (chart.groups || []).flatMap(groupTraces);
    for (const [i, label] of chart.lines) {
      const s = seriesOf(i);
      const base = { type: 'scatter', mode: 'lines', x: s.xs, name: label,
        visible: runOn[s.run], line: { color: color(s.run), width: 1.5 } };
      traces.push({ ...base, y: s.ys, opacity: 0.25, hoverinfo: 'skip',
        meta: { run: s.run, role: 'raw', series: i } });
      traces.push({ ...base, y: smooth(s.ys, smoothing), meta: { run: s.run, role: 'smoothed', series: i },
        hovertemplate: '%{fullData.name}<br>step %{x}<br>%{y:.7~g}<extra></extra>' });
    }
    return traces;
  }

  // A first look before plotly.js (megabytes of script) is evaluated: the first charts as
  // plain SVG lines, replaced by interactive plotly charts a moment later.
  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }
  function preview(div, chart) {
    const [W, H, P] = [400, 260, 30];
    let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
    if (!chart.lines.length) return; // a grouped chart waits for plotly
    const lines = chart.lines.map(([i]) => {
      const s = seriesOf(i);
      const ys = smooth(s.ys, smoothing);
      s.xs.forEach((x, i) => {
        if (!Number.isFinite(ys[i])) return;
        [x0, x1, y0, y1] = [Math.min(x0, x), Math.max(x1, x), Math.min(y0, ys[i]), Math.max(y1, ys[i])];
      });
      return [s, ys];
    });
    const box = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', height: '100%', class: 'preview' });
    const title = svg('text', { x: W / 2, y: 16, 'text-anchor': 'middle', 'font-size': 12 });
    title.textContent = chart.title;
    box.append(title);
    const sx = (x) => P + ((x - x0) / (x1 - x0 || 1)) * (W - 2 * P);
    const sy = (y) => H - P - ((y - y0) / (y1 - y0 || 1)) * (H - 2 * P);
    for (const [s, ys] of lines) {
      const pts = s.xs.map((x, i) => (Number.isFinite(ys[i])
        ? `${sx(x).toFixed(1)},${sy(ys[i]).toFixed(1)}` : ''))
        .filter(Boolean).join(' ');
      box.append(svg('polyline', { points: pts, fill: 'none', stroke: color(s.run), 'stroke-width': 1.5 }));
    }
    div.append(box);
  }

  function loadPlotly() {
    const script = document.createElement('script');
    script.textContent = document.getElementById('plotly-src').textContent;
    document.head.append(script); // an inline script runs as it is inserted
  }

  function drawScalar(div, chart) {
    div.replaceChildren();
    const layout = { ...LAYOUT, title: { text: chart.title, font: { size: 13 } },
      yaxis: { type: data.logy ? 'log' : 'linear' } };
    Plotly.newPlot(div, scalarTraces(chart), layout, CONFIG);
    drawn.push({ div, kind: 'scalar' });
  }

  function drawHistogram(div, chart) {
    const traces = chart.series.map((s) => ({ type: 'scatter', mode: 'lines', line: { shape: 'hvh',
      color: color(s.run) }, x: s.x, y: s.y, name: `${data.runs[s.run]} (step ${s.step})`,
      visible: runOn[s.run], meta: { run: s.run, role: 'histogram' } }));
    Plotly.newPlot(div, traces, { ...LAYOUT, title: { text: chart.tag, font: { size: 13 } },
      xaxis: { title: { text: 'value' } } }, CONFIG);
    drawn.push({ div, kind: 'histogram' });
  }

  const queue = [];
  function chartDiv(tag, kind) {
    const div = el('div', { class: 'chart', 'data-tag': tag, 'data-kind': kind });
    return div;
  }
  function pump() {
    const start = performance.now();
    while (queue.length && performance.now() - start < 40) {
      const [fn, div, chart] = queue.shift();
      fn(div, chart);
      // the first interactive chart's time since navigation, for bench/report.py
      const body = document.body.dataset;
      if (!body.plotlyChartMs) body.plotlyChartMs = String(performance.now());
      document.body.dataset.drawn = String(drawn.length);
    }
    if (queue.length) setTimeout(pump, 0); else document.body.dataset.ready = '1';
  }

  function controls() {
    const box = document.getElementById('controls');
    data.runs.forEach((run, i) => {
      const input = el('input', { type: 'checkbox', 'data-run': run });
      input.checked = true;
      input.addEventListener('change', () => { runOn[i] = input.checked; restyleRuns(i); });
      box.append(el('label', {}, input, el('span', { class: 'swatch', style: `background:${color(i)}` }),
        document.createTextNode(run)));
    });
    const slider = el('input', { id: 'smoothing', type: 'range', min: '0', max: '0.99', step: '0.01' });
    slider.value = String(smoothing);
    const out = el('output', { for: 'smoothing', text: smoothing.toFixed(2) });
    slider.addEventListener('input', () => {
      smoothing = Number(slider.value);
      out.textContent = smoothing.toFixed(2);
      restyleSmoothing();
    });
    box.append(el('label', {}, document.createTextNode('Smoothing '), slider, out));
  }

  function restyleRuns(run) {
    // the run's table row, media and text too
    for (const node of root.querySelectorAll('[data-run]')) {
      if (node.dataset.run === data.runs[run]) node.hidden = !runOn[run];
    }
    for (const { div } of drawn) {
      const idx = div.data.map((t, i) => (t.meta.run === run ? i : -1)).filter((i) => i >= 0);
      if (idx.length) Plotly.restyle(div, { visible: runOn[run] }, idx);
    }
  }

  function restyleSmoothing() {
    for (const { div, kind } of drawn) {
      if (kind !== 'scalar') continue;
      const idx = [];
      const ys = [];
      div.data.forEach((t, i) => {
        if (t.meta.role !== 'smoothed') return;
        idx.push(i);
        ys.push(smooth(seriesOf(t.meta.series).ys, smoothing));
      });
      if (idx.length) Plotly.restyle(div, { y: ys }, idx);
    }
  }

  function section(title, ...children) {
    root.append(el('h2', { text: title }), ...children);
  }

  function scalars() {
    for (const sec of data.scalars.sections) {
      const grid = el('div', { class: 'grid' });
      section(`Scalars: ${sec.name}`, grid);
      for (const chart of sec.charts) {
        const div = chartDiv(chart.tag, 'scalar');
        grid.append(div);
        queue.push([drawScalar, div, chart]);
      }
    }
  }

  function table() {
    const t = data.table;
    const head = el('tr', {}, ...t.columns.map((c) => el('th', { text: c })));
    const rows = t.rows.map((r) => el('tr', { 'data-run': r[0] },
      ...r.map((v) => el('td', { text: v === null ? '' : String(v) }))));
    section('Runs', el('table', { id: 'runs' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  }

  function media(title, items, make) {
    if (!items.length) return;
    section(title, el('div', { class: 'grid' }, ...items.map((m) => el('figure', { 'data-run': m.run },
      make(m), el('figcaption', { text: `${m.run} · ${m.tag} · step ${m.step}` })))));
  }

  function rest() {
    media('Images', data.images, (m) => el('img', { src: m.src, alt: m.tag }));
    media('Audio', data.audio, (m) => el('audio', { src: m.src, controls: '' }));
    media('Video', data.video, (m) => el('video', { src: m.src, controls: '', loop: '' }));
    if (data.histograms.length) {
      const grid = el('div', { class: 'grid' });
      section('Histograms (last step)', grid);
      for (const chart of data.histograms) {
        const div = chartDiv(chart.tag, 'histogram');
        grid.append(div);
        queue.push([drawHistogram, div, chart]);
      }
    }
    if (data.texts.length) {
      section('Text', ...data.texts.map((t) => {
        const body = el('div');
        body.innerHTML = t.html; // rendered and sanitized (nh3) when the report was made
        return el('div', { class: 'text', 'data-run': t.run },
          el('h3', { text: `${t.run} · ${t.tag} · step ${t.step}` }), body);
      }));
    }
    for (const g of data.graphs) {
      const items = g.nodes.map(([op, name, ins, outs]) => el('li', {
        text: `${op}${name ? ` ${name}` : ''}: (${ins.join(', ')}) -> (${outs.join(', ')})` }));
      const more = g.total > g.nodes.length ? ` (the first ${fmt(g.nodes.length)})` : '';
      section(`Graph: ${g.run} · ${g.tag}`, el('details', { open: '' },
        el('summary', { text: `${fmt(g.total)} operators${more}` }), el('ol', { class: 'graph' }, ...items)));
    }
  }

  function footer() {
    const p = data.scalars.points;
    const foot = document.getElementById('footer');
    foot.append(el('p', { id: 'points', text: `Scalars: ${fmt(p.kept)} of ${fmt(p.total)} points kept `
      + `(each series min/max downsampled to at most ${fmt(p.per_series)} points, so spikes stay).` }));
    if (data.table.dropped_columns) {
      const n = fmt(data.table.dropped_columns);
      foot.append(el('p', { text: `Run table: ${n} config columns left out.` }));
    }
    data.notes.forEach((note) => foot.append(el('p', { class: 'note', text: note })));
    if (data.left_out.length) {
      foot.append(el('p', { text: 'Left out:' }), el('ul', { id: 'left-out' },
        ...data.left_out.map((s) => el('li', { text: s }))));
    }
    foot.append(el('p', { text: `Made by visualdl ${data.version} on ${data.created}.` }));
  }

  controls();
  scalars();
  table();
  rest();
  footer();
  const PREVIEWS = 8;
  queue.slice(0, PREVIEWS).forEach(([fn, div, chart]) => fn === drawScalar && preview(div, chart));
  document.body.dataset.firstChartMs = String(performance.now());
  requestAnimationFrame(() => setTimeout(() => {
    loadPlotly();
    pump();
  }, 0));
}());
