// Find in the graph: the search box (Ctrl+F), its count, the matches of /api/graph/search
// marked on the drawing, and stepping through them (Enter, Shift+Enter, the arrow buttons),
// each revealed: its groups expanded, centred and selected. The matches come a page at a time
// (/api/graph/search's offset): stepping past the pages loaded asks for the next one, so every
// match of the count can be reached.
import { getJSON } from '../../shared/api.js';
import { el, debounce, fmtInt } from '../../shared/dom.js';

const PAGE = 500; // matches asked for at a time; the count says the total

export class GraphFind {
  /**
   * canvas: the GraphStage the matches are marked on; model(): the model shown (or null);
   * reveal(id, ancestors): bring a match into view; onEscape(): the box was cleared with
   * Escape; fail(err): show an error.
   */
  constructor({ canvas, model, reveal, onEscape, fail }) {
    Object.assign(this, { canvas, model, reveal, fail });
    this.pages = new Map(); // page number -> its matches (PAGE each), those asked for so far
    this.total = 0; // matches of the text, loaded or not
    this.index = -1;
    this.query = null; // the text `pages` are (or are being fetched) for
    this.searching = null; // that search, while it runs
    this.input = el('input', {
      type: 'search', id: 'graph-find', placeholder: 'Find (Ctrl+F): name, op, tensor',
      'aria-label': 'Find nodes by name, op type or tensor name', autocomplete: 'off', spellcheck: 'false',
    });
    this.count = el('span', { class: 'find-count', 'aria-live': 'polite' });
    this.input.addEventListener('input', debounce(() => this.find(this.input.value), 200));
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.next(e.shiftKey ? -1 : 1);
      } else if (e.key === 'Escape') {
        this.input.value = '';
        this.find('');
        onEscape();
      }
    });
    const button = (label, step, name) => el('button', { type: 'button', class: 'btn', onclick: () => this.next(step), 'aria-label': name }, label);
    this.element = el('span', { class: 'find' }, this.input,
      button('↑', -1, 'Previous match'), button('↓', 1, 'Next match'), this.count);
  }

  /** Ctrl+F: into the box, its text selected. */
  focus() {
    this.input.focus();
    this.input.select();
  }

  /** The matches loaded so far (the pages asked for), in order of their pages. */
  get matches() {
    return [...this.pages.keys()].sort((a, b) => a - b).flatMap((p) => this.pages.get(p));
  }

  /** Forget the matches (another model is shown). */
  reset() {
    this.pages = new Map();
    this.total = 0;
    this.index = -1;
    this.query = null;
    this.searching = null;
    this.count.textContent = '';
  }

  /** Search for `text`, unless its search is made or under way already (the debounced input
   *  after Enter ran it at once): the matches and the step through them are kept then. */
  find(text) {
    const q = text.trim();
    if (q === this.query) return this.searching || Promise.resolve();
    this.query = q;
    this.searching = this.#search(q).finally(() => {
      if (this.query === q) this.searching = null;
    });
    return this.searching;
  }

  async #search(q) {
    const model = this.model();
    if (!model) {
      this.query = null;
      return;
    }
    if (!q) {
      this.pages = new Map();
      this.total = 0;
      this.index = -1;
      this.count.textContent = '';
      this.mark();
      return;
    }
    try {
      const res = await getJSON('api/graph/search', { model: model.id, q, limit: PAGE });
      if (this.query !== q) return; // a newer text's search answers for the box
      this.pages = new Map([[0, res.matches]]);
      this.total = res.total;
      this.index = -1;
      this.count.textContent = res.total ? `${fmtInt(res.total)} found` : 'no match';
      this.mark();
    } catch (err) {
      if (this.query === q) this.query = null; // asked again on the next Enter or input
      this.fail(err);
    }
  }

  /** Reveal the next (step 1) or previous (-1) match of the text in the box: a text typed
   *  since the last search (its debounce still waiting) is searched for first. */
  async next(step) {
    const q = this.input.value.trim();
    await this.find(q);
    if (this.query !== q || !this.total) return; // the text changed meanwhile
    const n = this.total;
    const index = this.index < 0 ? (step > 0 ? 0 : n - 1) : (this.index + step + n) % n;
    let match;
    try {
      match = await this.#match(index, q);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (!match || this.query !== q) return;
    this.index = index;
    this.count.textContent = `${fmtInt(index + 1)} / ${fmtInt(n)}`;
    await this.reveal(match.id, match.ancestors);
    this.mark();
    this.input.focus();
  }

  /** Match `i` (0-based) of text `q`: its page is asked for first when not loaded yet. */
  async #match(i, q) {
    const page = Math.floor(i / PAGE);
    if (!this.pages.has(page)) {
      const model = this.model();
      if (!model) return null;
      const res = await getJSON('api/graph/search', { model: model.id, q, limit: PAGE, offset: page * PAGE });
      if (this.query !== q) return null;
      this.pages.set(page, res.matches);
    }
    return this.pages.get(page)[i - page * PAGE] || null;
  }

  /** Mark the drawn matches, and the current one (after every draw). */
  mark() {
    const page = this.pages.get(Math.floor(this.index / PAGE));
    const current = this.index >= 0 && page ? page[this.index % PAGE] : null;
    this.canvas.setMatches(this.matches.map((m) => m.id), current ? current.id : null);
  }
}
