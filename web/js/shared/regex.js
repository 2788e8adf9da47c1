// Regular expressions the page did not write: typed in a filter box, kept in the URL, or
// logged in a custom-scalars layout. The browser's engine backtracks, and it matches on the
// page's only thread: one pattern such as (a+)+$ against a 30-character tag never returns,
// and the page with it (no tab bar, no chart). So a pattern is checked before it is compiled,
// and refused, with the reason, when it is long or has a construct whose matching time can
// grow exponentially or as a high power of the text's length. Patterns matched here, on the
// page's thread (the filters), are held to the strict check and tested on at most
// SUBJECT_LIMITS[k] characters of each text, k its repeats of many lengths; the tag regexes of charts (layouts, charts made from
// regexes) go to shared/patternmatch.js, which runs them in a worker with a time limit.

/** The longest pattern taken, in characters. */
export const MAX_PATTERN = 1000;
/** At most this many repeats that can take many lengths (*, +, {n,}, {n,m} with m > n + 1):
 *  matching time is at worst a power of the text's length of this degree. */
export const MAX_GROWING = 2;
/** At most this many repeats that take one of two lengths (?, {n,n+1}): each may double it. */
export const MAX_OPTIONAL = 10;
/** The largest repeat count ({n}, {n,m}); a count over MAX_FIXED counts as a repeat of many
 *  lengths (it multiplies the work as one does). */
export const MAX_COUNT = 1000;
const MAX_FIXED = 16;
/** What the page's own thread matches of a text, in characters, by the pattern's number of
 *  repeats of many lengths (k: its work grows as the length to the power k + 1): all of it
 *  without any, else the first 2,048 or 256 characters (a hostile tag can be long). */
export const SUBJECT_LIMITS = [Infinity, 2048, 256];
/** A filter that spends longer than this in one go (a task of the page) turns itself off. */
export const FILTER_BUDGET_MS = 250;

const GROUP_OPEN = /^\(\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)?/;
const COUNTED = /^\{(\d+)(,(\d*))?\}/;

/** `(`/`)`-balanced frames: whether a group holds a repeat or an alternation. */
const frame = () => ({ repeats: false, alternation: false });

/**
 * Why `text` must not be run, or null when it may: longer than MAX_PATTERN, a backreference,
 * a repeated group that holds a repeat or an alternation ((a+)+, (.*)*, (a|ab)*: exponential
 * backtracking), and unless `counts` is false (a worker with a time limit runs it), more
 * than MAX_GROWING repeats of many lengths (.*.*.*, a{0,60} thrice: a power of the text's
 * length), MAX_OPTIONAL optional ones (a?a?a?...: 2^n) or a count over MAX_COUNT
 * (\w{4294967295}: work in proportion to the count at every position). A pass over the pattern's text,
 * which does not itself have to be valid (new RegExp says what is wrong with an invalid one).
 */
export function refusal(text, options = {}) {
  return analyze(text, options).why;
}

/** refusal's pass: {why: the refusal or null, growing: repeats of many lengths}. */
function analyze(text, { counts = true } = {}) {
  if (text.length > MAX_PATTERN) return { why: `longer than ${MAX_PATTERN} characters`, growing: 0 };
  const stack = [frame()];
  let last = null; // what a repeat would apply to: a closed group's frame, 'atom' or null
  let growing = 0;
  let optional = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '\\') {
      const next = text[i + 1] || '';
      if (/[1-9]/.test(next) || (next === 'k' && text[i + 2] === '<')) return { why: `a backreference (\\${next}) can take exponential time`, growing };
      i += 2;
      if (/[pPu]/.test(next) && text[i] === '{') i = Math.max(i, text.indexOf('}', i) + 1);
      last = 'atom';
    } else if (c === '[') {
      i = classEnd(text, i);
      last = 'atom';
    } else if (c === '(') {
      const open = GROUP_OPEN.exec(text.slice(i, i + 40));
      i += open ? open[0].length : 1;
      stack.push(frame());
      last = null;
    } else if (c === ')') {
      // a closed group's contents count for the group that holds it
      last = stack.length > 1 ? stack.pop() : 'atom';
      if (last !== 'atom') {
        stack[stack.length - 1].repeats ||= last.repeats;
        stack[stack.length - 1].alternation ||= last.alternation;
      }
      i += 1;
    } else if (c === '|') {
      top.alternation = true;
      last = null;
      i += 1;
    } else if (c === '*' || c === '+' || c === '?' || (c === '{' && COUNTED.test(text.slice(i, i + 40)))) {
      const { length, many, lengths, count } = repeatAt(text, i);
      if (many && last && last !== 'atom' && (last.repeats || last.alternation)) {
        return { why: `a repeated group that holds a repeat or an alternation (${snippet(text, i + length)}) can take exponential time`, growing };
      }
      if (counts && count > MAX_COUNT) return { why: `a repeat count over ${MAX_COUNT} (${snippet(text, i + length)}) can take very long`, growing };
      if (counts && (lengths > 2 || count > MAX_FIXED) && ++growing > MAX_GROWING) return { why: `more than ${MAX_GROWING} repeats of many lengths (*, +, {n,}, {n,m}) can take very long`, growing };
      if (counts && lengths === 2 && ++optional > MAX_OPTIONAL) return { why: `more than ${MAX_OPTIONAL} optional parts (?) can take very long`, growing };
      top.repeats = true;
      last = null;
      i += length + (text[i + length] === '?' ? 1 : 0); // a lazy repeat is still one
    } else {
      last = 'atom';
      i += 1;
    }
  }
  return { why: null, growing };
}

/** The index just past the character class that opens at `i`. */
function classEnd(text, i) {
  let j = i + 1;
  if (text[j] === '^') j += 1;
  if (text[j] === ']') j += 1; // a leading ] is a member
  while (j < text.length && text[j] !== ']') j += text[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** The repeat at `i`: its length in the pattern, whether it can match more than once, and
 *  how many lengths it can take (Infinity: without end). */
function repeatAt(text, i) {
  const c = text[i];
  if (c !== '{') return { length: 1, many: c !== '?', lengths: c === '?' ? 2 : Infinity, count: 1 };
  const m = COUNTED.exec(text.slice(i, i + 40));
  const low = Number(m[1]);
  const high = m[2] ? (m[3] === '' ? Infinity : Number(m[3])) : low;
  const count = Number.isFinite(high) ? high : low; // the largest count it names
  return { length: m[0].length, many: high > 1, lengths: high - low + 1, count };
}

/** Where in `text` a refusal is, shown briefly. */
function snippet(text, end) {
  const start = Math.max(0, end - 24);
  return (start > 0 ? '…' : '') + text.slice(start, end);
}

/**
 * Compile a pattern that did not come from the page: {re, limit} (how much of a text to
 * match: SUBJECT_LIMITS), or {error, refused} with the
 * browser's message for an invalid pattern (refused: false), or for a refused one
 * (refused: true) a message that names the pattern and says why. `options`: refusal's.
 */
export function safeRegExp(text, flags = '', options = {}) {
  let re;
  try {
    re = new RegExp(text, flags);
  } catch (err) {
    return { error: err.message, refused: false };
  }
  const { why, growing } = analyze(text, options);
  if (why) return { error: `Refused pattern ${JSON.stringify(shorten(text))}: ${why}`, refused: true };
  return { re, limit: SUBJECT_LIMITS[growing] ?? SUBJECT_LIMITS[SUBJECT_LIMITS.length - 1] };
}

const shorten = (text) => (text.length > 80 ? `${text.slice(0, 77)}…` : text);

/**
 * Compile `text` into a filter. Returns {ok, error, refused, test(name), onRefuse}; an empty,
 * invalid or refused pattern matches everything so the page never goes blank while the user
 * types. A filter that spends over FILTER_BUDGET_MS in one task refuses itself the same way
 * and calls its onRefuse (set by whoever shows its error).
 */
export function compileFilter(text) {
  if (!text) return { ok: true, error: null, test: () => true };
  const { re, limit, error, refused } = safeRegExp(text, 'i');
  if (error) return { ok: false, error, refused, test: () => true };
  const filter = { ok: true, error: null, refused: false, onRefuse: null };
  let spent = 0;
  let counting = false;
  filter.test = (name) => {
    if (!filter.ok) return true;
    if (!counting) { // the budget is per task: a new one starts from zero
      counting = true;
      setTimeout(() => { counting = false; spent = 0; });
    }
    const start = performance.now();
    const hit = re.test(bounded(name, limit));
    spent += performance.now() - start;
    if (spent > FILTER_BUDGET_MS) {
      Object.assign(filter, { ok: false, refused: true, error: `Refused pattern ${JSON.stringify(shorten(text))}: matching took over ${FILTER_BUDGET_MS / 1000} s, so the filter is off` });
      if (filter.onRefuse) filter.onRefuse();
    }
    return hit;
  };
  return filter;
}

/** `text`, or its first `limit` characters (safeRegExp's): what the page's thread matches. */
export const bounded = (text, limit) => (text.length > limit ? text.slice(0, limit) : text);
