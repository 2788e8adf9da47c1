// The text dashboard: a card per run × tag listing its entries by step, newest first,
// rendered as Markdown or shown as the plain logged text.
//
// Safety: the HTML comes from the server, where Markdown is rendered and then cleaned by an
// allowlist sanitizer (nh3/ammonia); this is the one place in the app that assigns innerHTML,
// and only that cleaned HTML. The plain-text mode uses textContent.
import { registerView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { getJSON } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { fmtWall } from '../shared/format.js';
import { el, setChildren, fmtInt } from '../shared/dom.js';
import { stateCheckbox } from '../shared/controls.js';

state.declare('plain', false);

const PAGE = 10; // entries shown per "show older" click

class TextView {
  constructor(ctx) {
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'text',
      kind: 'text',
      noun: 'text',
      makeCard: (c) => this.#makeCard(c),
    });
    setChildren(
      ctx.settings,
      el('h2', {}, 'Text'),
      stateCheckbox('plain', 'Show plain text (no Markdown)', () => this.grid.each((c) => c.render()),
        { name: 'plain-text' }),
    );
    this.grid.layout();
  }

  #makeCard({ run, tag, body, card }) {
    const list = el('ol', { class: 'text-entries', reversed: true });
    const more = el('button', { type: 'button', class: 'btn', hidden: true }, 'Show older entries');
    const note = el('p', { class: 'card-note' });
    body.append(list, more, note);
    let entries = [];
    let limit = PAGE;
    more.addEventListener('click', () => {
      limit += PAGE * 5;
      controller.render();
    });
    const controller = {
      async refresh() {
        const data = await getJSON('api/text', { run, tag });
        entries = data.entries;
        card.dataset.total = String(entries.length);
        controller.render();
      },
      render() {
        const plain = state.get('plain');
        const newest = entries.slice(-limit).reverse();
        setChildren(list, newest.map((e) => entryNode(e, plain)));
        more.hidden = entries.length <= limit;
        note.textContent = `${fmtInt(newest.length)} of ${fmtInt(entries.length)} entries, newest first`;
      },
    };
    return controller;
  }
}

function entryNode(entry, plain) {
  const content = plain ? el('pre', { class: 'text-plain' }) : el('div', { class: 'text-md' });
  if (plain) content.textContent = entry.text;
  else content.innerHTML = entry.html; // sanitized server-side (see the comment at the top)
  return el(
    'li',
    { class: 'text-entry', dataset: { step: String(entry.step) } },
    el('div', { class: 'text-head' }, el('strong', {}, `step ${entry.step}`), ' ', el('span', { class: 'muted' }, fmtWall(entry.wall_time))),
    content,
  );
}

registerView(runTagView({ id: 'text', label: 'Text', kind: 'text', order: 40, View: TextView, needsPlotly: false }));
