// Export what is drawn as a standalone SVG file or a PNG. Every color and font is an
// attribute on the drawn elements, so a clone of the drawing is the whole picture.
import { graphDefs } from './render.js';

const NS = 'http://www.w3.org/2000/svg';
const MARGIN = 20;
const MAX_SIDE = 16000; // browsers refuse canvases much bigger than this
const MAX_PIXELS = 120e6;

/** A standalone SVG document (string) of the drawing in `content` (<g>) sized w×h. */
export function svgDocument(content, width, height, background) {
  const svg = document.createElementNS(NS, 'svg');
  const w = Math.ceil(width + 2 * MARGIN);
  const h = Math.ceil(height + 2 * MARGIN);
  svg.setAttribute('xmlns', NS);
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(h));
  svg.setAttribute('viewBox', `${-MARGIN} ${-MARGIN} ${w} ${h}`);
  svg.append(graphDefs());
  const bg = document.createElementNS(NS, 'rect');
  for (const [k, v] of Object.entries({ x: -MARGIN, y: -MARGIN, width: w, height: h, fill: background })) {
    bg.setAttribute(k, String(v));
  }
  svg.append(bg);
  const clone = content.cloneNode(true);
  clone.removeAttribute('transform');
  clone.querySelectorAll('[tabindex]').forEach((n) => n.removeAttribute('tabindex'));
  svg.append(clone);
  return { text: new XMLSerializer().serializeToString(svg), width: w, height: h };
}

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function exportSVG(content, width, height, filename) {
  const doc = svgDocument(content, width, height, '#ffffff');
  download(new Blob([doc.text], { type: 'image/svg+xml' }), filename);
}

/** Render the SVG into a canvas (scaled down for huge graphs) and save it as PNG. */
export async function exportPNG(content, width, height, filename) {
  const doc = svgDocument(content, width, height, '#ffffff');
  let scale = Math.min(2, MAX_SIDE / doc.width, MAX_SIDE / doc.height);
  scale = Math.min(scale, Math.sqrt(MAX_PIXELS / (doc.width * doc.height)));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.floor(doc.width * scale));
  canvas.height = Math.max(1, Math.floor(doc.height * scale));
  const url = URL.createObjectURL(new Blob([doc.text], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'async';
    img.src = url;
    await img.decode();
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0, canvas.width, canvas.height);
  } finally {
    URL.revokeObjectURL(url);
  }
  const blob = await new Promise((resolve, reject) => {
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be encoded'))), 'image/png');
  });
  download(blob, filename);
  return { width: canvas.width, height: canvas.height, scale };
}
