// "Click to enlarge": a modal <dialog> showing one image at full window size. The native
// dialog gives focus trapping and Escape to close; a click on the backdrop closes it too.
import { el } from './dom.js';

let dialog = null;

function build() {
  const img = el('img', { class: 'lightbox-img', alt: '' });
  const caption = el('p', { class: 'lightbox-caption' });
  const close = el('button', { type: 'button', class: 'btn lightbox-close', 'aria-label': 'Close' }, 'Close');
  dialog = el('dialog', { class: 'lightbox', 'aria-label': 'Enlarged image' }, close, img, caption);
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close(); // the backdrop, not the image
  });
  document.body.append(dialog);
  return dialog;
}

/** Show `src` enlarged; `filter` is a CSS filter (brightness/contrast) to keep. */
export function openLightbox({ src, alt, caption, filter = '', pixelated = false }) {
  const d = dialog || build();
  const img = d.querySelector('img');
  img.src = src;
  img.alt = alt;
  img.style.filter = filter;
  img.classList.toggle('pixelated', pixelated);
  d.querySelector('.lightbox-caption').textContent = caption;
  if (!d.open) d.showModal();
}
