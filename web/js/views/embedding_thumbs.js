// The thumbnail of the point under the pointer, for embeddings recorded with label_img
// (torch's add_embedding(label_img=...)). The rows' thumbnails come as one sprite
// (/api/embeddings/sprite; row i at cell (i // cols, i % cols), cols = ceil(sqrt(rows))),
// fetched once per step; a hovered point shows its crop of it, scaled up to be seen.
import { apiURL } from '../shared/api.js';
import { el } from '../shared/dom.js';

const MIN_SIDE = 64; // CSS pixels: small thumbnails (28x28 digits) are scaled up to this

/** createThumbs() -> {element, use(run, tag, step, rows, size), bind(plotDiv)} */
export function createThumbs() {
  const picture = el('div', { class: 'emb-thumb-img' });
  const caption = el('span', { class: 'emb-thumb-caption' });
  const element = el('div', { class: 'emb-thumb', hidden: true, 'aria-live': 'polite' }, picture, caption);
  let sheet = null; // {url, rows, cols, h, w, scale}
  const bound = new WeakSet();

  function show(row) {
    if (!sheet || !Number.isInteger(row) || row < 0 || row >= sheet.rows) return;
    const { url, cols, h, w, scale } = sheet;
    Object.assign(picture.style, {
      width: `${w * scale}px`,
      height: `${h * scale}px`,
      backgroundImage: `url("${url}")`,
      backgroundSize: `${cols * w * scale}px auto`,
      backgroundPosition: `-${(row % cols) * w * scale}px -${Math.floor(row / cols) * h * scale}px`,
    });
    caption.textContent = `row ${row}`;
    element.dataset.row = String(row);
    element.hidden = false;
  }

  return {
    element,
    /** The step shown: `size` is the index's [height, width] of a thumbnail, or null. */
    use(run, tag, step, rows, size) {
      element.hidden = true;
      delete element.dataset.row;
      if (!size) {
        sheet = null;
        delete element.dataset.ready;
        return;
      }
      const [h, w] = size;
      const url = apiURL('api/embeddings/sprite', { run, tag, step });
      const scale = Math.max(1, Math.ceil(MIN_SIDE / Math.max(h, w)));
      sheet = { url, rows, cols: Math.max(1, Math.ceil(Math.sqrt(rows))), h, w, scale };
      const preload = new Image(); // decoded before the first hover
      preload.src = url;
      preload.decode().then(() => {
        if (sheet && sheet.url === url) element.dataset.ready = 'true';
      }, () => {});
    },
    /** Listen to a drawn plot's hovers (once per plot element). */
    bind(plotDiv) {
      if (bound.has(plotDiv) || typeof plotDiv.on !== 'function') return;
      bound.add(plotDiv);
      plotDiv.on('plotly_hover', (ev) => {
        const point = ev && ev.points && ev.points[0];
        if (point) show(Number(point.customdata));
      });
    },
  };
}
