// Export what is drawn as a standalone SVG file or a PNG. Every color and font is an
// attribute on the drawn elements, so a clone of the drawing is the whole picture. A view's
// export is built a slice at a time (svgParts), yielding to the browser between slices: an
// expanded 100,000-op view is a file of 100 MB and more, which took the page 30 s in one go.
import { graphDefs, svgEl } from './render.js';

const NS = 'http://www.w3.org/2000/svg';
const MARGIN = 20;
const MAX_SIDE = 16000; // browsers refuse canvases much bigger than this
const MAX_PIXELS = 120e6;

const SLICE_MS = 40; // an export's work between two yields to the browser

/** The document's <svg> sized for a drawing of w×h, with its defs and background. */
function svgRoot(width, height, background) {
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
  return { svg, width: w, height: h };
}

/** A standalone SVG document (string) of the drawing in `content` (<g>) sized w×h, at once
 *  (the diff's two sides; a view's export is svgParts). */
export function svgDocument(content, width, height, background) {
  const { svg, width: w, height: h } = svgRoot(width, height, background);
  const clone = content.cloneNode(true);
  clone.removeAttribute('transform');
  clone.querySelectorAll('[tabindex]').forEach((n) => n.removeAttribute('tabindex'));
  svg.append(clone);
  return { text: new XMLSerializer().serializeToString(svg), width: w, height: h };
}

/** A task of its own: what the browser has waiting (input, a frame) runs before it. */
function macrotask() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

// the namespace declaration XMLSerializer gives an element serialized on its own (in the
// document it is the <svg>'s); in a start tag '>' is always escaped in attribute values
const OWN_XMLNS = /^(<[^\s/>]+[^>]*?) xmlns="http:\/\/www\.w3\.org\/2000\/svg"/;

/**
 * The standalone SVG document of a drawing, the same text svgDocument makes of it, as parts
 * of a Blob, built a slice at a time: after every `sliceMs` of work the browser gets a turn,
 * and onProgress(fraction done) is told. `drawing`: {viewport: the drawing's <g> (its
 * attributes are taken, not its children), layers: the layers' <g>s (likewise), count: how
 * many elements, elements: iterable of [layer index, tile key, element, fresh]}: each element
 * goes into its layer's <g data-tile=key>, those in the order they first come; one not
 * `fresh` (still drawn) is copied first.
 */
export async function svgParts(drawing, width, height, background, { onProgress = null, sliceMs = SLICE_MS } = {}) {
  const serializer = new XMLSerializer();
  const groups = drawing.layers.map(() => new Map()); // tile key -> [element text]
  let done = 0;
  let since = performance.now();
  for (const [layer, tile, element, fresh] of drawing.elements) {
    const copy = fresh ? element : element.cloneNode(true);
    copy.removeAttribute('tabindex');
    copy.querySelectorAll('[tabindex]').forEach((n) => n.removeAttribute('tabindex'));
    const text = serializer.serializeToString(copy).replace(OWN_XMLNS, '$1');
    const texts = groups[layer].get(tile);
    if (texts) texts.push(text);
    else groups[layer].set(tile, [text]);
    done += 1;
    if ((done & 63) === 0 && performance.now() - since >= sliceMs) {
      if (onProgress) onProgress(done / Math.max(drawing.count, done));
      await macrotask();
      since = performance.now();
    }
  }
  // the document around the elements: each tile's <g> holds a comment naming its texts
  const { svg, width: w, height: h } = svgRoot(width, height, background);
  const root = drawing.viewport.cloneNode(false);
  root.removeAttribute('transform');
  root.removeAttribute('tabindex');
  const filled = [];
  drawing.layers.forEach((layer, i) => {
    const shell = layer.cloneNode(false);
    for (const [tile, texts] of groups[i]) {
      const g = svgEl('g', { 'data-tile': tile });
      g.append(document.createComment(String(filled.length)));
      filled.push(texts);
      shell.append(g);
    }
    root.append(shell);
  });
  svg.append(root);
  const frame = serializer.serializeToString(svg).split(/<!--(\d+)-->/);
  const parts = [];
  frame.forEach((text, i) => {
    if (i % 2 === 0) parts.push(text);
    else parts.push(...filled[Number(text)]);
  });
  if (onProgress) onProgress(1);
  return { parts, width: w, height: h };
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

/** Save the drawing in `content` (a <g>) as an SVG file, at once (the diff's two sides). */
export function exportSVG(content, width, height, filename) {
  const doc = svgDocument(content, width, height, '#ffffff');
  download(new Blob([doc.text], { type: 'image/svg+xml' }), filename);
}

/** Save `drawing` (svgParts') as an SVG file, built a slice at a time; `options`: svgParts'. */
export async function exportDrawingSVG(drawing, width, height, filename, options = {}) {
  const doc = await svgParts(drawing, width, height, '#ffffff', options);
  download(new Blob(doc.parts, { type: 'image/svg+xml' }), filename);
}

/** Render `drawing` (svgParts') into a canvas (scaled down for huge graphs) and save it as
 *  PNG; `options`: svgParts'. */
export async function exportPNG(drawing, width, height, filename, options = {}) {
  const doc = await svgParts(drawing, width, height, '#ffffff', options);
  let scale = Math.min(2, MAX_SIDE / doc.width, MAX_SIDE / doc.height);
  scale = Math.min(scale, Math.sqrt(MAX_PIXELS / (doc.width * doc.height)));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.floor(doc.width * scale));
  canvas.height = Math.max(1, Math.floor(doc.height * scale));
  const url = URL.createObjectURL(new Blob(doc.parts, { type: 'image/svg+xml' }));
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
