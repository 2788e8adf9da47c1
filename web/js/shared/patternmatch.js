// Tag regexes that come from the logs (custom-scalars layouts) or the URL (charts made from
// regexes), matched off the page's thread with a time limit. The check of shared/regex.js
// refuses the known shapes of catastrophic backtracking at once, by name; what it lets
// through is still matched in a Worker, ended when it runs past MATCH_LIMIT_MS, so that no
// pattern (nor a hostile tag it meets) can hang the page. Results are kept per pattern and
// tag: new tags are sent, known ones are not.
import { safeRegExp } from './regex.js';

/** How long one pattern may take over the tags it is sent with, in milliseconds. */
export const MATCH_LIMIT_MS = 1000;

const START_LIMIT_MS = 15000;
const WORKER_URL = new URL('./matchworker.js', import.meta.url);

export class PatternMatcher {
  #known = new Map(); // pattern -> {hits: Map(tag -> bool), asked: Set(tag), refused}
  #queue = []; // [{pattern, texts}]
  #worker = null;
  #job = null; // the job under way: {id, pattern, texts, timer}
  #ids = 0;

  /** onChange(): something that was pending is now known (redraw what uses it). */
  constructor(onChange, limitMs = MATCH_LIMIT_MS) {
    this.onChange = onChange;
    this.limitMs = limitMs;
  }

  /**
   * What is known of `pattern` over `tags`: {refused: message naming it} | {pending: true}
   * (the rest is asked for; onChange follows) | {matched: [tag]}.
   */
  match(pattern, tags) {
    let entry = this.#known.get(pattern);
    if (!entry) {
      const { error, refused } = safeRegExp(pattern, '', { counts: false }); // the worker times the rest
      const message = error && (refused ? error : `Invalid regular expression: ${error}`);
      entry = { hits: new Map(), asked: new Set(), refused: message || null };
      this.#known.set(pattern, entry);
    }
    if (entry.refused) return { refused: entry.refused };
    const missing = tags.filter((t) => !entry.hits.has(t));
    if (!missing.length) return { matched: tags.filter((t) => entry.hits.get(t)) };
    const texts = missing.filter((t) => !entry.asked.has(t));
    if (texts.length) {
      texts.forEach((t) => entry.asked.add(t));
      this.#queue.push({ pattern, texts });
      this.#next();
    }
    return { pending: true };
  }

  #next() {
    if (this.#job || !this.#queue.length) return;
    const { pattern, texts } = this.#queue.shift();
    if (this.#known.get(pattern)?.refused) {
      this.#next();
      return;
    }
    this.#ids += 1;
    const job = { id: this.#ids, pattern, texts, timer: null };
    this.#job = job;
    if (!this.#worker) {
      this.#worker = new Worker(WORKER_URL, { type: 'module' });
      this.#worker.onmessage = (event) => this.#answer(event.data);
      this.#worker.onerror = (event) => this.#fail(`could not be matched (${event.message || 'the worker failed'})`);
    }
    this.#worker.postMessage({ id: job.id, pattern, flags: '', texts });
    // a worker that never starts (a busy machine, a blocked script) is no reason to wait on
    job.timer = setTimeout(() => this.#fail('the matching worker did not start'), START_LIMIT_MS);
  }

  #answer(data) {
    const job = this.#job;
    if (!job || data.id !== job.id) return;
    if (data.started) {
      clearTimeout(job.timer);
      job.timer = setTimeout(() => this.#fail(`matching took over ${this.limitMs / 1000} s, so it was stopped`), this.limitMs);
      return;
    }
    if (data.error) {
      this.#finish(`Invalid regular expression: ${data.error}`);
      return;
    }
    const entry = this.#known.get(job.pattern);
    job.texts.forEach((t, i) => entry.hits.set(t, data.hits[i]));
    this.#finish(null);
  }

  /** End the worker (it may be stuck in the pattern) and refuse the job's pattern. */
  #fail(why) {
    if (!this.#job) return;
    this.#worker?.terminate();
    this.#worker = null;
    const shown = this.#job.pattern.length > 80 ? `${this.#job.pattern.slice(0, 77)}…` : this.#job.pattern;
    this.#finish(`Refused pattern ${JSON.stringify(shown)}: ${why}`);
  }

  #finish(refused) {
    const job = this.#job;
    clearTimeout(job.timer);
    if (refused) this.#known.get(job.pattern).refused = refused;
    this.#job = null;
    this.#next();
    this.onChange();
  }

  destroy() {
    if (this.#job) clearTimeout(this.#job.timer);
    this.#worker?.terminate();
    this.#worker = null;
    this.#queue = [];
    this.#job = null;
  }
}
