// The app shell: header with a tab per dashboard that has data, the run list, status, and the
// refresh loop. The server lists every kind with its view modules (/api/kinds, from the
// registry of kinds); the shell imports them, each registers itself (shared/views.js), and
// the shell knows nothing about any particular kind.
import * as state from './shared/state.js';
import { getJSON, postJSON, whenQuiet } from './shared/api.js';
import { allViews } from './shared/views.js';
import { createRunList } from './shared/runlist.js';
import { installSaveHtml } from './shared/savehtml.js';
import { el, setChildren } from './shared/dom.js';
import { loadPlotly, plotlyReady } from './shared/plot.js';
import { early, firstViews, importViews } from './boot.js';

state.declare('tab', '');

const $ = (id) => document.getElementById(id);
const shell = {
  info: null,
  tags: {}, // kind -> {run: [tag, ...]}
  dataVersion: null,
  loaded: null,
  view: null,
  timer: null,
  busy: false,
  // Whether every view module is in: until then only the tab the URL names may open (its
  // view module is imported first, see boot.js) and the tab bar waits, so that it shows
  // every tab at once as it always did.
  allLoaded: false,
};

const runList = createRunList($('runs'), () => shell.view && shell.view.update({ runs: true }));

const ctx = {
  main: $('main'),
  settings: $('view-settings'),
  runs: runList,
  /** {run: [tags]} for one kind, as last loaded. */
  tagsOf: (kind) => shell.tags[kind] || {},
  info: () => shell.info,
};

function availableViews() {
  // a view may also say it has something to show without logs (graph: --model files), or
  // that it shows only while something holds (compare: while runs are chosen)
  return allViews().filter(
    (v) => (Object.keys(shell.tags[v.kind] || {}).length > 0 || (v.available && v.available()))
      && (!v.shown || v.shown()),
  );
}

// A view asks to be opened (the comparison, from the run list): `detail.id` names it.
window.addEventListener('vdl:open-view', (event) => {
  const view = allViews().find((v) => v.id === event.detail.id) || availableViews()[0] || null;
  if (view === shell.view && view) {
    renderTabs(availableViews(), view);
    view.update({ data: true, runs: false });
  } else {
    activate(view);
  }
});

function renderTabs(views, active) {
  if (!shell.allLoaded) return; // drawn once every view is in (allViewsLoaded)
  const tabs = views.map((v) =>
    el(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `tab-${v.id}`,
        'aria-selected': String(v === active),
        'aria-controls': 'main',
        tabindex: v === active ? '0' : '-1',
        dataset: { view: v.id },
        onclick: () => activate(v),
      },
      v.label,
    ),
  );
  setChildren($('tabs'), tabs);
}

$('tabs').addEventListener('keydown', (event) => {
  const tabs = [...$('tabs').querySelectorAll('[role=tab]')];
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
  if (!step) return;
  event.preventDefault();
  const next = tabs[(i + step + tabs.length) % tabs.length];
  next.focus();
  next.click();
});

function activate(view) {
  if (shell.view === view) return;
  if (shell.view) shell.view.unmount();
  shell.view = view;
  state.set({ tab: view ? view.id : '' });
  setChildren(ctx.settings);
  setChildren(ctx.main);
  syncRuns();
  renderTabs(availableViews(), view);
  if (view) {
    ctx.main.setAttribute('aria-labelledby', `tab-${view.id}`);
    mountWhenReady(view);
  } else {
    showEmpty();
  }
}

// plotly.js loads on demand (see loadPlotly): a view that draws charts is mounted once it is
// there; one that says `needsPlotly: false` is mounted at once.
function mountWhenReady(view) {
  if (view.needsPlotly === false || plotlyReady()) {
    view.mount(ctx);
    return;
  }
  setChildren(ctx.main, el('p', { class: 'empty' }, 'Loading charts…'));
  loadPlotly().then(
    () => {
      if (shell.view !== view) return;
      setChildren(ctx.main);
      view.mount(ctx);
    },
    (err) => {
      if (shell.view === view) setChildren(ctx.main, el('p', { class: 'empty', role: 'alert' }, err.message));
    },
  );
}

function syncRuns() {
  const kind = shell.view ? shell.view.kind : null;
  const runs = kind ? Object.keys(shell.tags[kind] || {}) : [];
  return runList.setRuns(runs);
}

function showEmpty() {
  const info = shell.info;
  const where = info ? info.logdirs.join(', ') : '';
  const text = !info || !info.loaded ? 'Loading logs…' : `No data yet in ${where}. Waiting for logs…`;
  setChildren(ctx.main, el('p', { class: 'empty', dataset: { empty: 'app' } }, text));
}

function renderStatus() {
  const info = shell.info;
  const status = $('status');
  if (!info) return;
  const runs = runList.all().length;
  let text = info.loaded ? `${runs} run${runs === 1 ? '' : 's'}` : 'Loading…';
  if (info.errors) text += ` · ${info.errors} bad record${info.errors === 1 ? '' : 's'} skipped`;
  status.textContent = text;
  status.title = (info.error_messages || []).join('\n');
  status.classList.toggle('has-errors', info.errors > 0);
}

/**
 * Fetch status; when the data changed, reload tags and tell the active view. `first`: use
 * the requests that boot.js made (the page's first refresh).
 */
async function refresh(first = false) {
  if (shell.busy) return;
  shell.busy = true;
  try {
    const info = await (first ? early.info : getJSON('api/info'));
    shell.info = info;
    const changed = info.data_version !== shell.dataVersion || info.loaded !== shell.loaded;
    if (changed) {
      const tags = await (first ? early.tags : getJSON('api/tags'));
      shell.tags = tags.kinds || {};
      shell.dataVersion = info.data_version;
      shell.loaded = info.loaded;
      applyData();
    }
    renderStatus();
  } catch (err) {
    $('status').textContent = `Server unreachable (${err.message})`;
  } finally {
    shell.busy = false;
  }
}

function applyData() {
  const views = availableViews();
  let wanted = views.find((v) => v.id === state.get('tab'));
  if (!wanted && !shell.allLoaded) return; // which tab opens is known once every view is in
  wanted = wanted || views[0] || null;
  if (wanted !== shell.view) {
    activate(wanted);
    return;
  }
  renderTabs(views, shell.view);
  const runsChanged = syncRuns();
  if (shell.view) shell.view.update({ data: true, runs: runsChanged });
  else showEmpty();
}

function schedule() {
  clearTimeout(shell.timer);
  if (!$('autorefresh').checked) return;
  const seconds = shell.info ? Math.min(Math.max(shell.info.reload_interval, 1), 30) : 1;
  const delay = shell.info && shell.info.loaded ? seconds * 1000 : 500;
  shell.timer = setTimeout(async () => {
    if (!document.hidden) await refresh();
    schedule();
  }, delay);
}

$('autorefresh').addEventListener('change', schedule);
$('refresh').addEventListener('click', async () => {
  try {
    await postJSON('api/reload', {});
  } catch (_) {
    /* shown by refresh() below */
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  shell.dataVersion = null; // force a re-read even if nothing changed
  await refresh();
});
installSaveHtml($('save-html'), runList, $('status'));
$('sidebar-toggle').addEventListener('click', () => {
  const open = document.body.classList.toggle('sidebar-open');
  $('sidebar-toggle').setAttribute('aria-expanded', String(open));
});

/** The other views are in: show the tab bar, or open the first tab when the URL's is not
 *  there. */
function allViewsLoaded() {
  shell.allLoaded = true;
  if (!shell.info) return;
  const views = availableViews();
  const wanted = views.find((v) => v.id === state.get('tab')) || views[0] || null;
  if (wanted !== shell.view) activate(wanted);
  else renderTabs(views, shell.view);
}

/** Fetch plotly.js's bytes while the first view starts, when it draws charts (evaluated on
 *  mount, see mountWhenReady); a view that draws none does not share the network with it. */
function preloadPlotly() {
  const view = allViews().find((v) => v.id === state.get('tab'));
  if (plotlyReady() || (view && view.needsPlotly === false)) return;
  document.head.append(el('link', { rel: 'preload', href: 'static/vendor/plotly.min.js', as: 'script' }));
}

showEmpty();
// boot.js asked the first questions and imported the first views (those of the URL's tab)
firstViews
  .then(({ rest }) => rest, (err) => {
    $('status').textContent = `Server unreachable (${err.message})`;
    return [];
  })
  .then(async (others) => {
    preloadPlotly();
    let rest = others;
    const first = allViews().find((v) => v.id === state.get('tab'));
    if (rest.length && !(first && first.needsPlotly === false)) {
      // a view that waits for plotly.js gains nothing by opening before the others are in
      await importViews(rest);
      rest = [];
    }
    if (!rest.length) shell.allLoaded = true;
    await refresh(true);
    if (rest.length) await importViews(rest).then(allViewsLoaded);
  })
  .then(() => {
    schedule();
    // warm plotly.js once the first view has had time to paint (evaluating it blocks the
    // page for about a second), so that the next tab opens at once; not while a request
    // is out, which may be what the view draws first (a big model's graph, say)
    const idle = window.requestIdleCallback || ((fn) => setTimeout(fn, 0));
    setTimeout(() => whenQuiet(1000).then(() => idle(() => loadPlotly().catch(() => {}), { timeout: 3000 })), 2000);
  });
