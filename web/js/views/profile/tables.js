// Sortable, searchable tables of the profile dashboard (operators, kernels, compare, memory ops).
// Columns are {key, label, fmt, numeric}; rows are plain objects. Sorting is by header
// buttons (aria-sort says the order); the filter is a case-insensitive substring of the name.
import { el, setChildren } from '../../shared/dom.js';

export function fmtUs(us) {
  if (us === null || us === undefined || Number.isNaN(us)) return '—';
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(2)} ms`;
  return `${us.toFixed(1)} µs`;
}

export function fmtPct(x) {
  return `${(x * 100).toFixed(1)}%`;
}

export function fmtBytesSigned(n) {
  const a = Math.abs(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = a;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${n < 0 ? '-' : ''}${u ? v.toFixed(1) : v} ${units[u]}`;
}

export class SortTable {
  constructor({ columns, caption, sortKey, descending = true, rowKey = (r) => r.name, className = '' }) {
    this.columns = columns;
    this.sortKey = sortKey;
    this.descending = descending;
    this.rowKey = rowKey;
    this.rows = [];
    this.filter = '';
    this.thead = el('thead');
    this.tbody = el('tbody');
    this.table = el('table', { class: `prof-table ${className}` }, el('caption', {}, caption), this.thead, this.tbody);
    this.element = el('div', { class: 'prof-table-wrap' }, this.table);
  }

  setRows(rows) {
    this.rows = rows;
    this.render();
  }

  setFilter(text) {
    this.filter = text.toLowerCase();
    this.render();
  }

  sorted() {
    const col = this.columns.find((c) => c.key === this.sortKey) || this.columns[0];
    const get = col.value || ((r) => r[col.key]);
    const sign = this.descending ? -1 : 1;
    return this.rows
      .filter((r) => !this.filter || String(r.name).toLowerCase().includes(this.filter))
      .sort((a, b) => {
        const x = get(a);
        const y = get(b);
        if (typeof x === 'string' || typeof y === 'string') return sign * String(x).localeCompare(String(y));
        return sign * ((x ?? -Infinity) - (y ?? -Infinity));
      });
  }

  render() {
    setChildren(this.thead, el('tr', {}, this.columns.map((c) => {
      const active = c.key === this.sortKey;
      const sort = active ? (this.descending ? 'descending' : 'ascending') : 'none';
      return el('th', { scope: 'col', 'aria-sort': sort, class: c.numeric ? 'num' : '' },
        el('button', {
          type: 'button',
          class: 'sort',
          dataset: { key: c.key },
          onclick: () => {
            if (this.sortKey === c.key) this.descending = !this.descending;
            else {
              this.sortKey = c.key;
              this.descending = !!c.numeric;
            }
            this.render();
          },
        }, c.label, active ? (this.descending ? ' ▼' : ' ▲') : ''));
    })));
    const rows = this.sorted();
    setChildren(this.tbody, rows.map((r) => el('tr', { dataset: { name: this.rowKey(r) } },
      this.columns.map((c) => {
        const v = c.value ? c.value(r) : r[c.key];
        return el(c.key === 'name' ? 'th' : 'td', { class: c.numeric ? 'num' : '', scope: c.key === 'name' ? 'row' : null, dataset: { key: c.key, value: String(v) } },
          c.fmt ? c.fmt(v, r) : String(v ?? ''));
      }))));
    this.element.dataset.rows = String(rows.length);
  }
}
