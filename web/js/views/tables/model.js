// A table of one step, as /api/tables/data sends it (columnar: one array of cells per
// column), with what the view does to it: each column's type, the order of a sort, the rows a
// filter keeps and the CSV of the rows shown. Everything works on row indices (Uint32Array),
// so sorting and filtering 100,000 rows moves no cells.
//
// Cells: a number, a boolean, a string, null (None), {n: "NaN" | "Infinity" | "-Infinity"}
// (a non-finite number) or {blob: i} (an image or audio clip, the i-th of `blobs`).

export class TableModel {
  constructor(body) {
    this.columns = body.columns;
    this.rows = body.rows;
    this.data = body.data;
    this.blobs = body.blobs;
    this.types = this.data.map((cells) => columnType(cells, this.blobs));
    this.searchText = null; // per row, every cell as lower-case text (built when first asked)
  }

  /** The number a numeric cell stands for (NaN when it has none). */
  static number(cell) {
    if (typeof cell === 'number') return cell;
    if (typeof cell === 'boolean') return cell ? 1 : 0;
    if (cell && typeof cell === 'object' && 'n' in cell) return Number(cell.n);
    return NaN;
  }

  /** A cell as text (what the filter searches and the CSV holds for text and numbers). */
  text(col, row) {
    const cell = this.data[col][row];
    if (cell === null || cell === undefined) return '';
    if (typeof cell === 'object') return 'n' in cell ? cell.n : this.blobName(cell.blob);
    return String(cell);
  }

  blobName(i) {
    const blob = this.blobs[i];
    return blob && blob.mime === 'audio/wav' ? `audio-${i}.wav` : `image-${i}.png`;
  }

  /** Row indices ordered by column `col` (`dir` 1 or -1); empty and NaN cells go last. */
  order(col, dir, rows) {
    const cells = this.data[col];
    const out = Uint32Array.from(rows);
    if (this.types[col] === 'number') {
      const keys = new Float64Array(this.rows);
      for (let i = 0; i < this.rows; i += 1) keys[i] = TableModel.number(cells[i]);
      out.sort((a, b) => {
        const x = keys[a];
        const y = keys[b];
        if (x !== x) return y !== y ? a - b : 1; // NaN last, ties in the original order
        if (y !== y) return -1;
        return (x - y) * dir || a - b;
      });
      return out;
    }
    const keys = new Array(this.rows);
    for (let i = 0; i < this.rows; i += 1) keys[i] = cells[i] === null ? null : this.text(col, i);
    out.sort((a, b) => {
      const x = keys[a];
      const y = keys[b];
      if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;
      return (x < y ? -dir : x > y ? dir : 0) || a - b;
    });
    return out;
  }

  /** Row indices that `query` keeps: `column op value` (op one of < <= > >= = != ~) on one
   *  column, else rows where any cell's text holds `query` (case-insensitive). */
  filter(query) {
    const q = query.trim();
    const all = () => {
      const out = new Uint32Array(this.rows);
      for (let i = 0; i < this.rows; i += 1) out[i] = i;
      return out;
    };
    if (!q) return all();
    const test = this.#comparison(q) || this.#search(q.toLowerCase());
    const kept = [];
    for (let i = 0; i < this.rows; i += 1) if (test(i)) kept.push(i);
    return Uint32Array.from(kept);
  }

  #comparison(q) {
    const m = /^(.+?)\s*(<=|>=|!=|==|=|<|>|~)\s*(.*)$/.exec(q);
    if (!m) return null;
    const col = this.columns.indexOf(m[1].trim());
    if (col < 0) return null;
    const [, , op, raw] = m;
    const cells = this.data[col];
    const numeric = this.types[col] === 'number' && raw.trim() !== '' && !Number.isNaN(Number(raw));
    const value = numeric ? Number(raw) : raw;
    const pick = numeric ? (i) => TableModel.number(cells[i]) : (i) => this.text(col, i);
    const ops = {
      '<': (x) => x < value, '<=': (x) => x <= value, '>': (x) => x > value, '>=': (x) => x >= value,
      '=': (x) => x === value, '==': (x) => x === value, '!=': (x) => x !== value,
      '~': (x) => String(x).toLowerCase().includes(String(value).toLowerCase()),
    };
    return (i) => ops[op](pick(i));
  }

  #search(needle) {
    if (!this.searchText) {
      this.searchText = new Array(this.rows);
      const textCols = this.columns.map((_, c) => c).filter((c) => this.types[c] !== 'image' && this.types[c] !== 'audio');
      for (let i = 0; i < this.rows; i += 1) {
        this.searchText[i] = textCols.map((c) => this.text(c, i)).join('\u0000').toLowerCase();
      }
    }
    return (i) => this.searchText[i].includes(needle);
  }

  /** The rows `rows` (in that order) as CSV text; a media cell is the URL `blobURL(i)`. */
  csv(rows, blobURL) {
    const quote = (s) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
    const lines = [this.columns.map(quote).join(',')];
    for (const r of rows) {
      lines.push(this.columns.map((_, c) => {
        const cell = this.data[c][r];
        if (cell && typeof cell === 'object' && 'blob' in cell) return quote(blobURL(cell.blob));
        return quote(this.text(c, r));
      }).join(','));
    }
    return `${lines.join('\r\n')}\r\n`;
  }
}

/** 'number', 'text', 'image', 'audio' or 'mixed' (any cells; sorted as text). */
function columnType(cells, blobs) {
  let type = null;
  for (const cell of cells) {
    if (cell === null || cell === undefined) continue;
    let t;
    if (typeof cell === 'number' || typeof cell === 'boolean') t = 'number';
    else if (typeof cell === 'string') t = 'text';
    else if ('n' in cell) t = 'number';
    else t = blobs[cell.blob] && blobs[cell.blob].mime === 'audio/wav' ? 'audio' : 'image';
    if (type === null) type = t;
    else if (type !== t) return 'mixed';
  }
  return type || 'text';
}
