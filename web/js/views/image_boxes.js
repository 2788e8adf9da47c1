// Boxes over an image (LogWriter.add_image(boxes=...), SummaryWriter.add_image_with_boxes):
// fetched from /api/images/boxes for the step shown and drawn as an SVG laid over the <img>.
// The SVG's viewBox is the image's pixels and its aspect rule ("meet") matches the image's
// object-fit: contain, so the boxes scale and letterbox exactly as the pixels do, in a card,
// at actual size and in any window. Each card keeps its score threshold and its hidden
// classes across steps: stepping through a run keeps looking at the same detections.
import { getJSON } from '../shared/api.js';
import { el, uid } from '../shared/dom.js';

const SVG = 'http://www.w3.org/2000/svg';
// Saturated colours that stand out on photographs; a class keeps its colour in a card.
export const BOX_COLORS = ['#ff2d55', '#00e676', '#2979ff', '#ffd600', '#d500f9', '#00e5ff', '#ff6d00', '#76ff03'];
const NO_LABEL = ''; // the class of boxes recorded without labels

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/**
 * createBoxLayer({run, tag}) -> {controls, present(img, step, count)}
 *   controls   the card's threshold slider and class checkboxes (hidden without boxes)
 *   present()  resolves to what the frame shows: `img` itself when the step has no boxes,
 *              else a wrapper holding `img` and the boxes' SVG
 */
export function createBoxLayer({ run, tag }) {
  const hidden = new Set(); // classes unticked by the user
  const colors = new Map(); // class -> colour, in order of first appearance
  let threshold = 0;
  let current = null; // the /api/images/boxes body of the step shown
  let svg = null;
  const controls = el('div', { class: 'box-controls', hidden: true });

  const colorOf = (label) => {
    if (!colors.has(label)) colors.set(label, BOX_COLORS[colors.size % BOX_COLORS.length]);
    return colors.get(label);
  };
  const visible = (i) => !hidden.has(current.labels[i] ?? NO_LABEL)
    && (!current.scores.length || current.scores[i] >= threshold);

  function draw() {
    const { width, height } = current;
    const size = Math.max(width, height) / 25;
    svg.replaceChildren();
    let shown = 0;
    current.boxes.forEach(([x0, y0, x1, y1], i) => {
      const label = current.labels[i] ?? NO_LABEL;
      const score = current.scores.length ? current.scores[i] : null;
      const color = colorOf(label);
      const g = svgEl('g', { class: 'box', 'data-index': i, 'data-label': label });
      g.append(svgEl('rect', {
        x: x0, y: y0, width: x1 - x0, height: y1 - y0, fill: 'none', stroke: color,
        'stroke-width': 2, 'vector-effect': 'non-scaling-stroke',
      }));
      const caption = [label, score === null ? '' : score.toFixed(2)].filter(Boolean).join(' ');
      if (caption) {
        const text = svgEl('text', { x: x0 + size * 0.2, y: y0 >= size ? y0 - size * 0.25 : y0 + size, fill: color, 'font-size': size, class: 'box-caption' });
        text.textContent = caption;
        g.append(text);
      }
      if (!visible(i)) g.style.display = 'none';
      else shown += 1;
      svg.append(g);
    });
    controls.dataset.shown = String(shown);
    controls.dataset.total = String(current.boxes.length);
  }

  function buildControls() {
    const parts = [];
    if (current.scores.length) {
      const id = uid('box-threshold');
      const input = el('input', { id, type: 'range', min: '0', max: '1', step: '0.01', name: 'box-threshold', value: String(threshold) });
      const out = el('output', { for: id, class: 'slider-value' }, threshold.toFixed(2));
      input.addEventListener('input', () => {
        threshold = Number(input.value);
        out.textContent = threshold.toFixed(2);
        draw();
      });
      parts.push(el('div', { class: 'field box-threshold' }, el('label', { for: id }, 'Score ≥'), el('div', { class: 'slider-row' }, input, out)));
    }
    const counts = new Map();
    current.boxes.forEach((_, i) => {
      const label = current.labels[i] ?? NO_LABEL;
      counts.set(label, (counts.get(label) || 0) + 1);
    });
    if (current.labels.length) {
      const boxes = [...counts.keys()].sort().map((label) => {
        const input = el('input', { type: 'checkbox', name: 'box-class', value: label, checked: !hidden.has(label) });
        input.addEventListener('change', () => {
          if (input.checked) hidden.delete(label);
          else hidden.add(label);
          draw();
        });
        const swatch = el('span', { class: 'box-swatch', style: { background: colorOf(label) } });
        return el('label', { class: 'box-class' }, input, swatch, `${label || '(no label)'} (${counts.get(label)})`);
      });
      parts.push(el('fieldset', { class: 'box-classes' }, el('legend', {}, 'Classes'), ...boxes));
    }
    controls.replaceChildren(...parts);
    controls.hidden = !parts.length;
  }

  return {
    controls,
    async present(img, step, count) {
      if (!count) {
        current = null;
        controls.hidden = true;
        controls.replaceChildren();
        return img;
      }
      current = await getJSON('api/images/boxes', { run, tag, step });
      svg = svgEl('svg', {
        class: 'box-layer', viewBox: `0 0 ${current.width} ${current.height}`,
        preserveAspectRatio: 'xMidYMid meet', 'aria-hidden': 'true',
      });
      buildControls();
      draw();
      return el('span', { class: 'boxed' }, img, svg);
    },
  };
}
