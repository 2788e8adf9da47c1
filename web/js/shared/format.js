// Formatting shared by the dashboards: names, wall times, durations, byte sizes, numbers.

/** A wall time (seconds since the epoch) as local "YYYY-MM-DD HH:MM:SS". */
export function fmtWall(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  const d = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Seconds as "0.25 s", "1 min 05 s". */
export function fmtDuration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${Number(seconds.toFixed(3))} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${String(Math.round(seconds - m * 60)).padStart(2, '0')} s`;
}

/** Bytes as "512 B", "3.2 KB", "1.5 MB". */
export function fmtBytes(n) {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A number with up to 4 significant digits; strings (categorical values) pass through. */
export function fmtValue(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  return String(v);
}

// Characters that hide or reorder a name's text when shown as is: C0 and C1 controls, the
// bidi marks, embeddings, overrides and isolates (U+202E would show "abc\u202Edef" as
// "abcfed"), and the invisible separators.
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** A run or tag name as displayed: every hidden or reordering character shown as a visible
 *  escape (``\u202E``), so that what a user reads is what the name holds. */
export function showName(name) {
  return String(name).replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}
