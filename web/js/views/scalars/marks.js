// What the scalar charts draw besides their lines, pure functions: the min/max envelope of
// the raw points around a smoothed line (the server's `lower`/`upper`), and the mark of a
// run's first non-finite value ("NaN at step S", from the run table's `nan` column: the
// point may be in no bucket a downsampled chart draws).
import { withAlpha } from '../../shared/tint.js';

function finiteOrNull(arr) {
  return Array.from(arr, (v) => (Number.isFinite(v) ? v : null));
}

/** The band of one line: its lower edge, then its upper edge filled down to it (nothing
 *  when the series came without an envelope). */
export function envelopeTraces(series, x, color, name, meta) {
  if (!series.lower || !series.upper || series.lower.length !== x.length) return [];
  const edge = (role, y) => ({
    type: 'scatter',
    mode: 'lines',
    x,
    y: finiteOrNull(y),
    name,
    line: { color, width: 0 },
    fill: role === 'upper' ? 'tonexty' : 'none',
    fillcolor: withAlpha(color, 0.2),
    hoverinfo: 'skip',
    showlegend: false,
    meta: { ...meta, role: `envelope-${role}` },
  });
  return [edge('lower', series.lower), edge('upper', series.upper)];
}

/**
 * Shapes and annotations marking each line's first non-finite value: `marks` are
 * [{run, tag, step, value}]; `xOf(line)` the line's x values. On a step axis the mark is at
 * the step; on a time axis at the first drawn point at or after it.
 */
export function nanMarks(lines, marks, xOf) {
  const shapes = [];
  const annotations = [];
  for (const mark of marks) {
    const line = lines.find((l) => l.run === mark.run && l.tag === mark.tag);
    if (!line) continue;
    const steps = line.series.steps;
    let i = 0;
    while (i < steps.length && steps[i] < mark.step) i += 1;
    if (i === steps.length) continue;
    const at = xOf(line)[i];
    shapes.push({
      type: 'line', xref: 'x', yref: 'paper', x0: at, x1: at, y0: 0, y1: 1,
      line: { color: '#d62728', width: 1.5, dash: 'dash' },
      name: 'nan-mark',
    });
    annotations.push({
      x: at, y: 1, xref: 'x', yref: 'paper', yanchor: 'bottom', showarrow: false,
      text: `${mark.value || 'NaN'} at step ${mark.step}`,
      font: { size: 10, color: '#d62728' },
      name: 'nan-mark',
    });
  }
  return { shapes, annotations };
}
