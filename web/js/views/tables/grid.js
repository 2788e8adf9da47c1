// The table of one step on screen: a header that sorts (click; again to reverse), a filter
// box, a CSV download and a virtually scrolled body. Only the rows in view (plus a few on
// each side) are in the DOM, each placed absolutely at `index * rowHeight` inside a spacer as
// tall as every row, so 100,000 rows scroll like 30.
import { el, fmtInt, uid } from '../../shared/dom.js';
import { openLightbox } from '../../shared/lightbox.js';
import { TableModel } from './model.js';

const OVERSCAN = 6; // rows drawn above and below the visible ones
const ROW_TEXT = 28; // px, rows of numbers and text
const ROW_MEDIA = 60; // px, rows with an image or audio cell

export class TableGrid {
  /** blobURL(i) -> the URL of blob i of the table shown; caption: names it in the lightbox. */
  constructor({ label, blobURL, caption, fileName }) {
    this.blobURL = blobURL;
    this.caption = caption;
    this.fileName = fileName;
    this.model = null;
    this.sort = null; // {col, dir}
    this.view = new Uint32Array(0); // the row indices shown, in order
    this.drawn = new Map(); // row position -> element
    const filterId = uid('table-filter');
    this.filter = el('input', {
      id: filterId, type: 'search', class: 'table-filter', name: 'table-filter',
      placeholder: 'Filter: text, or column > value', autocomplete: 'off',
    });
    this.count = el('span', { class: 'count table-count', 'aria-live': 'polite' });
    this.download = el('button', { type: 'button', class: 'btn table-csv' }, 'Download CSV');
    this.head = el('div', { class: 'table-head', role: 'row' });
    this.spacer = el('div', { class: 'table-spacer', role: 'rowgroup' });
    this.scroller = el('div', { class: 'table-scroll', role: 'grid', 'aria-label': label, tabindex: '0' },
      this.head, this.spacer);
    this.element = el('div', { class: 'table-box' },
      el('div', { class: 'table-toolbar' },
        el('label', { for: filterId, class: 'visually-hidden' }, `Filter ${label}`),
        this.filter, this.count, this.download),
      this.scroller);
    let frame = 0;
    this.scroller.addEventListener('scroll', () => {
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; this.draw(); });
    });
    this.filter.addEventListener('input', () => this.#apply());
    this.download.addEventListener('click', () => this.#downloadCSV());
  }

  /** Show a new table (a step's body from /api/tables/data); keeps the sort and filter. */
  setData(body) {
    this.model = new TableModel(body);
    if (this.sort && this.sort.col >= this.model.columns.length) this.sort = null;
    const media = this.model.types.some((t) => t === 'image' || t === 'audio');
    this.rowHeight = media ? ROW_MEDIA : ROW_TEXT;
    this.scroller.style.setProperty('--row-h', `${this.rowHeight}px`);
    const wide = this.model.types.map((t) => t === 'text' || t === 'mixed');
    this.scroller.style.setProperty('--table-cols', wide.map((w) => (w ? 'minmax(10rem, 2fr)' : 'minmax(7rem, 1fr)')).join(' '));
    this.scroller.style.setProperty('--table-min', `${wide.reduce((sum, w) => sum + (w ? 10 : 7), 0)}rem`);
    this.scroller.setAttribute('aria-colcount', String(this.model.columns.length));
    this.#drawHead();
    this.#apply();
  }

  #drawHead() {
    this.head.replaceChildren(...this.model.columns.map((name, c) => {
      const sorted = this.sort && this.sort.col === c;
      const button = el('button', { type: 'button', class: 'table-sort', dataset: { col: String(c) } }, name,
        sorted ? (this.sort.dir > 0 ? ' ▲' : ' ▼') : '');
      button.addEventListener('click', () => {
        this.sort = { col: c, dir: sorted && this.sort.dir > 0 ? -1 : 1 };
        this.#drawHead();
        this.#apply();
      });
      return el('div', {
        class: `table-th type-${this.model.types[c]}`, role: 'columnheader',
        'aria-sort': sorted ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none',
      }, button);
    }));
  }

  /** Filter, then sort, then redraw from the top. */
  #apply() {
    const t0 = performance.now();
    let rows = this.model.filter(this.filter.value);
    if (this.sort) rows = this.model.order(this.sort.col, this.sort.dir, rows);
    this.view = rows;
    this.spacer.style.height = `${rows.length * this.rowHeight}px`;
    // a short table takes only the room it needs (the scroll box is at most 480px tall)
    this.scroller.style.height = `${Math.min(480, 40 + Math.max(rows.length, 3) * this.rowHeight)}px`;
    this.scroller.setAttribute('aria-rowcount', String(rows.length + 1));
    this.count.textContent = rows.length === this.model.rows
      ? `${fmtInt(rows.length)} rows` : `${fmtInt(rows.length)} of ${fmtInt(this.model.rows)} rows`;
    for (const node of this.drawn.values()) node.remove();
    this.drawn.clear();
    this.scroller.scrollTop = 0;
    this.draw();
    this.lastApplyMs = performance.now() - t0; // read by bench/tables.py
  }

  /** Put the rows in view in the DOM and take the others out. */
  draw() {
    if (!this.model) return;
    const h = this.rowHeight;
    const top = Math.max(0, this.scroller.scrollTop - this.head.offsetHeight);
    const first = Math.max(0, Math.floor(top / h) - OVERSCAN);
    const last = Math.min(this.view.length, Math.ceil((top + this.scroller.clientHeight) / h) + OVERSCAN);
    for (const [pos, node] of this.drawn) {
      if (pos < first || pos >= last) {
        node.remove();
        this.drawn.delete(pos);
      }
    }
    const fresh = [];
    for (let pos = first; pos < last; pos += 1) {
      if (this.drawn.has(pos)) continue;
      const node = this.#row(pos);
      this.drawn.set(pos, node);
      fresh.push(node);
    }
    this.spacer.append(...fresh);
  }

  #row(pos) {
    const r = this.view[pos];
    const cells = this.model.columns.map((_, c) => this.#cell(c, r));
    return el('div', {
      class: 'table-row', role: 'row', 'aria-rowindex': String(pos + 2),
      style: { transform: `translateY(${pos * this.rowHeight}px)` }, dataset: { row: String(r) },
    }, cells);
  }

  #cell(c, r) {
    const cell = this.model.data[c][r];
    const node = el('div', { class: 'table-td', role: 'gridcell' });
    if (cell && typeof cell === 'object' && 'blob' in cell) {
      node.append(this.#media(cell.blob, c, r));
    } else {
      const text = this.model.text(c, r);
      node.textContent = typeof cell === 'number' && !Number.isInteger(cell) ? fmtNumber(cell) : text;
      node.title = text;
      if (cell === null) node.classList.add('empty-cell');
      if (this.model.types[c] === 'number') node.classList.add('num');
    }
    return node;
  }

  #media(i, c, r) {
    const blob = this.model.blobs[i];
    const src = this.blobURL(i);
    if (!blob) return el('span', { class: 'muted' }, '(missing)'); // a damaged record
    if (blob.mime === 'audio/wav') {
      const audio = el('audio', { controls: true, preload: 'none', src, class: 'table-audio' });
      audio.setAttribute('aria-label', `${this.model.columns[c]}, row ${r + 1}`);
      return audio;
    }
    const alt = `${this.model.columns[c]}, row ${r + 1}`;
    const img = el('img', { src, alt, loading: 'lazy', class: 'table-thumb', width: String(blob.width), height: String(blob.height) });
    const pixelated = blob.width < 48 && blob.height < 48;
    img.classList.toggle('pixelated', pixelated);
    return el('button', {
      type: 'button', class: 'table-thumb-btn', 'aria-label': `Enlarge ${alt}`,
      onclick: () => openLightbox({ src, alt, caption: `${this.caption} · ${alt} · ${blob.width}×${blob.height}`, pixelated }),
    }, img);
  }

  #downloadCSV() {
    const absolute = (i) => new URL(this.blobURL(i), document.baseURI).href;
    const text = this.model.csv(this.view, absolute);
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
    const a = el('a', { href: url, download: this.fileName() });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }
}

function fmtNumber(x) {
  const abs = Math.abs(x);
  return abs !== 0 && (abs < 1e-4 || abs >= 1e6) ? x.toExponential(4) : String(Number(x.toPrecision(6)));
}
