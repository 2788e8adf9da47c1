// A run's details in the comparison: its whole config, nested as it was recorded, and its
// hyper-parameters (/api/config), shown when its column header is chosen.
import { getJSON } from '../shared/api.js';
import { el, setChildren } from '../shared/dom.js';
import { colorOf } from '../shared/colors.js';
import { showName } from '../shared/format.js';

/** Fill `container` with `run`'s config; a newer call wins over one still loading. */
export async function showRunDetails(container, run) {
  const asked = String(Date.now() + Math.random());
  container.dataset.asked = asked;
  let body;
  try {
    body = await getJSON('api/config', { run });
  } catch (err) {
    if (container.dataset.asked === asked) setChildren(container, el('p', { role: 'alert' }, err.message));
    return;
  }
  if (container.dataset.asked !== asked) return;
  const hasConfig = Object.keys(body.config).length > 0;
  const hasHParams = Object.keys(body.hparams).length > 0;
  container.dataset.run = run;
  setChildren(container,
    el('h3', { class: 'hp-title' },
      el('span', { class: 'swatch', style: { background: colorOf(run) }, 'aria-hidden': 'true' }),
      ` ${showName(run)}`),
    hasConfig ? el('pre', { class: 'cmp-json', dataset: { part: 'config' } }, JSON.stringify(body.config, null, 2)) : null,
    hasHParams ? el('h4', {}, 'Hyper-parameters') : null,
    hasHParams ? el('pre', { class: 'cmp-json', dataset: { part: 'hparams' } }, JSON.stringify(body.hparams, null, 2)) : null,
    !hasConfig && !hasHParams ? el('p', { class: 'muted' }, 'This run has no config or hparams.') : null);
}
