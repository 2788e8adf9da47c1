// The one place that assigns colors to runs. A run's color comes from a hash of its name,
// probing to the next free slot on collision, and never changes once given in this page:
// new runs arriving, filters and selection do not repaint existing runs.

const PALETTE = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf',
  '#bcbd22', '#7f7f7f', '#3366cc', '#dc3912', '#0099c6', '#dd4477', '#66aa00', '#b82e2e',
  '#316395', '#994499', '#22aa99', '#aaaa11', '#6633cc', '#e67300', '#8b0707', '#5574a6',
];

const assigned = new Map(); // run -> palette index
const used = new Map(); // palette index -> count of runs using it

function hash(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** Give every run in `runs` a color (sorted order makes the result independent of arrival). */
export function assignColors(runs) {
  for (const run of [...runs].sort()) {
    if (assigned.has(run)) continue;
    const start = hash(run) % PALETTE.length;
    let slot = start;
    const least = Math.min(...PALETTE.map((_, i) => used.get(i) || 0));
    for (let k = 0; k < PALETTE.length; k += 1) {
      const candidate = (start + k) % PALETTE.length;
      if ((used.get(candidate) || 0) === least) {
        slot = candidate;
        break;
      }
    }
    assigned.set(run, slot);
    used.set(slot, (used.get(slot) || 0) + 1);
  }
}

/** The color of `run` (assigning one if needed). */
export function colorOf(run) {
  if (!assigned.has(run)) assignColors([run]);
  return PALETTE[assigned.get(run)];
}
