// Which charts the scalars dashboard shows, and which lines each one draws: a chart per tag,
// the charts add_scalars recorded (a line per key), custom layouts (multiline charts of tag
// regexes, margin charts), charts made in the page from regexes, and pinned copies of any of
// them. Pure functions over the tag index and /api/scalars/layouts: no DOM, no fetching.
import { groupOf } from '../../shared/cards.js';
import { safeRegExp, bounded } from '../../shared/regex.js';
import { lineStyle } from './chart.js';

/** A chart's key: JSON keeps any tag text intact. ['t', tag] | ['g', main_tag] |
 *  ['l', category, title] | ['u', regex, ...] | ['p', key of the pinned chart]. */
export const keyOf = (...parts) => JSON.stringify(parts);

export function parseKey(key) {
  try {
    const parts = JSON.parse(key);
    return Array.isArray(parts) && parts.every((p) => typeof p === 'string') ? parts : null;
  } catch (_) {
    return null;
  }
}

// Card groups (CardGrid group ids) of the sections above the automatic tag groups; the
// automatic ones are tag prefixes, which never start with a NUL.
export const PINNED = '\u0000pinned';
export const NEW = '\u0000new';
const LAYOUT = '\u0000layout\u0000';

/** The heading of a card group. */
export function sectionLabel(group) {
  if (group === PINNED) return 'Pinned';
  if (group === NEW) return 'New charts';
  if (group.startsWith(LAYOUT)) return group.slice(LAYOUT.length);
  return group || 'Ungrouped';
}

/** The title of a chart made in the page from regexes. */
export function regexTitle(patterns) {
  return patterns.join(' | ');
}

/**
 * Every chart to show, in page order: pinned, custom layouts, charts made here, then one
 * per add_scalars chart or lone tag (grouped by prefix; a tag drawn in an add_scalars chart
 * is not drawn again alone).
 * tags: the union of scalar tags over the active runs; layouts: /api/scalars/layouts (or
 * null); made: [[regex, ...]]; pinned: [key]; filter: the tag filter (automatic charts only).
 * Returns {specs: [spec], total: number of automatic charts, shown: of them, shown}.
 * A spec is {key, group, kind: 'tag'|'group'|'multiline'|'margin', title, tags?, keys?,
 * patterns?, margin?, pinned?: the key it pins}.
 */
export function chartSpecs({ tags, layouts, made, pinned, filter, order = null }) {
  const byKey = new Map();
  const custom = [];
  for (const category of (layouts && layouts.layout) || []) {
    for (const chart of category.charts) {
      const key = keyOf('l', category.category, chart.title);
      const spec = chart.type === 'margin'
        ? { key, group: LAYOUT + category.category, kind: 'margin', title: chart.title, margin: chart.tags }
        : { key, group: LAYOUT + category.category, kind: 'multiline', title: chart.title, patterns: chart.tags };
      custom.push(spec);
      byKey.set(key, spec);
    }
  }
  const mine = made.map((patterns) => {
    const spec = { key: keyOf('u', ...patterns), group: NEW, kind: 'multiline', title: regexTitle(patterns), patterns, removable: true };
    byKey.set(spec.key, spec);
    return spec;
  });
  const present = new Set(tags);
  const inCharts = new Set();
  const auto = [];
  for (const chart of (layouts && layouts.charts) || []) {
    if (!chart.tags.some((t) => present.has(t))) continue;
    chart.tags.forEach((t) => inCharts.add(t));
    auto.push({ key: keyOf('g', chart.title), kind: 'group', title: chart.title, tags: chart.tags, keys: chart.keys });
  }
  for (const tag of tags) {
    if (!inCharts.has(tag)) auto.push({ key: keyOf('t', tag), kind: 'tag', title: tag, tags: [tag] });
  }
  auto.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : a.kind === 'group' ? -1 : 1));
  if (order) byFirstScreen(auto, order);
  for (const spec of auto) {
    spec.group = groupOf(spec.title);
    byKey.set(spec.key, spec);
  }
  const shownAuto = auto.filter((s) => filter.test(s.title) || (s.kind === 'group' && s.tags.some((t) => filter.test(t))));
  const pins = [];
  for (const inner of pinned) {
    const base = byKey.get(inner) || specFromKey(inner);
    if (base) pins.push({ ...base, key: keyOf('p', inner), group: PINNED, pinned: inner, removable: false });
  }
  return { specs: [...pins, ...custom, ...mine, ...shownAuto], total: auto.length, shown: shownAuto.length, byKey };
}

/** Sort charts in the first screen's order (`order.position(spec)`: firstscreen.js); the
 *  sort is stable, so charts it does not place keep their order, after the others. */
function byFirstScreen(specs, order) {
  const at = new Map(specs.map((s) => [s, order.position(s)]));
  const rank = (s) => (at.get(s) === null ? Infinity : at.get(s));
  specs.sort((a, b) => rank(a) - rank(b));
}

/** A chart whose key says everything about it (a lone tag, a chart of regexes). */
function specFromKey(key) {
  const parts = parseKey(key);
  if (!parts) return null;
  if (parts[0] === 't' && parts.length === 2) return { key, kind: 'tag', title: parts[1], tags: [parts[1]] };
  if (parts[0] === 'u' && parts.length > 1) {
    const patterns = parts.slice(1);
    return { key, kind: 'multiline', title: regexTitle(patterns), patterns };
  }
  return null;
}

/** Compile a chart's regexes (case-sensitive, searched anywhere, as TensorBoard does):
 *  {regexes, error}, the regexes of the patterns that may run, and an error naming each
 *  invalid or refused one (it came from a log or the URL: shared/regex.js). `options`:
 *  the check's (counts: false when a worker with a time limit will run them). */
export function compilePatterns(patterns, options = {}) {
  const regexes = [];
  const errors = [];
  for (const p of patterns) {
    const { re, error, refused } = safeRegExp(p, '', options);
    if (re) regexes.push(re);
    else errors.push(refused ? error : `Invalid regular expression: ${error}`);
  }
  return errors.length ? { regexes, error: errors.join(' · ') } : { regexes };
}

/** Match patterns here, at once (what linesOf does without a PatternMatcher's `match`). */
function matchHere(pattern, tags) {
  const { error } = compilePatterns([pattern]);
  if (error) return { refused: error };
  const { re, limit } = safeRegExp(pattern);
  return { matched: tags.filter((t) => re.test(bounded(t, limit))) };
}

/**
 * The lines (and margin bands) of `spec` over `runs`: [{run, tag, name, style?}] and
 * [{run, tags: {lower, upper}}]. has(run, tag) says whether a run has a tag; tagsOf(run)
 * lists a run's tags (for regexes); match(pattern, tags) says which tags a pattern matches
 * ({matched} | {refused} | {pending}: shared/patternmatch.js). With a pattern pending, the
 * answer says `pending: true`; a refused one is named in `error`.
 */
export function linesOf(spec, runs, has, tagsOf, match = matchHere) {
  const lines = [];
  const bands = [];
  if (spec.kind === 'tag') {
    const tag = spec.tags[0];
    for (const run of runs) if (has(run, tag)) lines.push({ run, tag, name: run });
    return { lines, bands };
  }
  if (spec.kind === 'group') {
    for (const run of runs) {
      spec.tags.forEach((tag, i) => {
        if (has(run, tag)) lines.push({ run, tag, name: `${run}/${spec.keys[i]}`, style: lineStyle(i) });
      });
    }
    return { lines, bands };
  }
  if (spec.kind === 'margin') {
    const [value, lower, upper] = spec.margin;
    for (const run of runs) {
      if (has(run, lower) && has(run, upper)) bands.push({ run, tags: { lower, upper } });
      if (has(run, value)) lines.push({ run, tag: value, name: `${run}/${value}` });
    }
    return { lines, bands };
  }
  const tags = [...new Set(runs.flatMap((run) => tagsOf(run)))];
  const matched = new Set();
  const errors = [];
  let pending = false;
  for (const pattern of spec.patterns) {
    const found = match(pattern, tags);
    if (found.refused) errors.push(found.refused);
    pending ||= Boolean(found.pending);
    (found.matched || []).forEach((t) => matched.add(t));
  }
  if (pending) return { lines, bands, pending };
  const error = errors.join(' · ');
  const order = [...matched].sort();
  for (const run of runs) {
    order.forEach((tag, i) => {
      if (has(run, tag)) lines.push({ run, tag, name: `${run}/${tag}`, style: lineStyle(i) });
    });
  }
  return error ? { lines, bands, error } : { lines, bands };
}

// ---- what the URL keeps: charts made here ("chart") and per-chart run subsets ("cruns") --
/** The charts made here: each a list of tag regexes, from the URL's JSON texts. */
export function parseMade(texts) {
  const out = [];
  for (const text of texts) {
    const parts = parseKey(text);
    if (parts && parts.length) out.push(parts);
  }
  return out;
}

/** Per-chart run subsets, chart key -> [run], from the URL's JSON [key, run, ...] texts. */
export function parseSubsets(texts) {
  const out = new Map();
  for (const text of texts) {
    const parts = parseKey(text);
    if (parts && parts.length >= 1) out.set(parts[0], parts.slice(1));
  }
  return out;
}

/** `texts` with chart `key`'s subset set to `runs` (null: every run, no subset). */
export function withSubset(texts, key, runs) {
  const others = texts.filter((text) => (parseKey(text) || [])[0] !== key);
  return runs ? [...others, keyOf(key, ...runs)] : others;
}

// ---- export -----------------------------------------------------------------------------------
/** The charts an exported layout holds, of `specs` (key -> spec): custom layouts, charts
 *  made here, and pinned charts that are in neither. */
export function exportedSpecs(specs) {
  const custom = (s) => s.kind === 'multiline' || s.kind === 'margin';
  return [...specs.values()].filter((s) => {
    if (s.pinned === undefined) return custom(s);
    const original = specs.get(s.pinned);
    return !(original && custom(original));
  });
}

const pyString = (text) => JSON.stringify(text); // a JSON string literal is a Python one

/** The layout dictionary of `specs` as Python, to paste into a training script. */
export function exportLayout(specs) {
  const categories = new Map();
  for (const spec of specs) {
    const category = spec.group === NEW ? 'Custom' : sectionLabel(spec.group);
    let entry;
    if (spec.kind === 'margin') entry = ['Margin', spec.margin];
    else if (spec.kind === 'multiline') entry = ['Multiline', spec.patterns];
    else entry = ['Multiline', spec.tags.map((t) => `^${t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)];
    if (!categories.has(category)) categories.set(category, new Map());
    categories.get(category).set(spec.title, entry);
  }
  const lines = ['layout = {'];
  for (const [category, charts] of categories) {
    lines.push(`    ${pyString(category)}: {`);
    for (const [title, [kind, tags]] of charts) {
      lines.push(`        ${pyString(title)}: [${pyString(kind)}, [${tags.map(pyString).join(', ')}]],`);
    }
    lines.push('    },');
  }
  lines.push('}', 'writer.add_custom_scalars(layout)');
  return lines.join('\n');
}
