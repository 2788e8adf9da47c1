// The tables dashboard: a card per run × tag with a step slider and the table of that step
// (web/js/views/tables/grid.js: sort, filter, CSV, virtual scrolling). A step's cells come
// from /api/tables/data in one columnar answer, cached by the browser; images and audio from
// /api/tables/blob, only for the rows on screen.
import { registerView } from '../shared/views.js';
import { getJSON, apiURL } from '../shared/api.js';
import { RunTagGrid, runTagView } from '../shared/runtag.js';
import { steppedCard } from '../shared/steppedcard.js';
import { el, setChildren, ensureStylesheet } from '../shared/dom.js';
import { TableGrid } from './tables/grid.js';

class TablesView {
  constructor(ctx) {
    ensureStylesheet('tables-css', 'static/css/tables.css');
    this.ctx = ctx;
    this.grid = new RunTagGrid(ctx, {
      id: 'tables',
      kind: 'table',
      noun: 'tables',
      wide: true,
      makeCard: (c) => this.#makeCard(c),
    });
    setChildren(ctx.settings, el('h2', {}, 'Tables'), this.grid.syncControl());
    this.grid.layout();
  }

  #makeCard(cardCtx) {
    const { run, tag, card } = cardCtx;
    let step = null;
    const safe = (s) => s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|[._]+$/g, '');
    const table = new TableGrid({
      label: `${tag} (${run})`,
      caption: `${tag} · ${run}`,
      blobURL: (i) => apiURL('api/tables/blob', { run, tag, step, blob: i }),
      fileName: () => `${safe(`${run}_${tag}_${step}`) || 'table'}.csv`,
    });
    let asked = 0;
    let shown = null; // the step and wall time drawn: a refresh that changes neither redraws nothing
    const show = async (i, data) => {
      const wanted = data.steps[i];
      const key = `${wanted}@${data.wall_times[i]}`;
      if (key === shown) return; // keeps the scroll position while a run logs other data
      const ticket = ++asked;
      const body = await getJSON('api/tables/data', { run, tag, step: wanted });
      if (ticket !== asked) return; // a newer step was asked for meanwhile
      step = body.step;
      shown = key;
      table.setData(body);
      card.dataset.shownStep = String(step);
    };
    card.classList.add('table-card');
    return steppedCard(cardCtx, {
      fetch: () => getJSON('api/tables', { run, tag }),
      show,
      content: [table.element],
    });
  }
}

registerView(runTagView({ id: 'tables', label: 'Tables', kind: 'table', order: 45, View: TablesView, needsPlotly: false }));
