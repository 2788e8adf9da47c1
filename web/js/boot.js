// The page's first requests, made before the shell's own modules are in. index.html runs
// this small module ahead of app.js, whose imports (run list, tables, plot glue) take a
// dozen fetches: the shell's three questions (/api/kinds, /api/info, /api/tags) go out at
// once, and the view module of the tab that the URL names (views/<tab>.js, say
// views/graph.js for ?tab=graph) is imported as soon as the kinds are known, so that view
// can ask for its own data (a model's first view) while the shell is still loading. app.js
// takes these answers (one module instance: the same URL) and imports the other views.
import * as state from './shared/state.js';
import { getJSON } from './shared/api.js';

state.declare('tab', '');

/** The shell's first questions, asked together: none waits for another's answer. */
export const early = { kinds: getJSON('api/kinds'), info: getJSON('api/info'), tags: getJSON('api/tags') };
Object.values(early).forEach((answer) => answer.catch(() => {})); // app.js reports them

/** Import view modules; one that fails to load costs only its own tab. */
export async function importViews(urls) {
  const results = await Promise.allSettled(urls.map((url) => import(new URL(url, document.baseURI).href)));
  results.forEach((r, i) => {
    if (r.status === 'rejected') console.warn(`view ${urls[i]} failed to load: ${r.reason}`);
  });
}

/**
 * Tabs whose view asks the server for slow work as soon as it loads (the graph's first view
 * waits for the model's parse), and the modules of each that lie on the way to that request:
 * when the URL opens on one, the first (a built-in view's, static/js/views/<tab>.js, the URL
 * /api/kinds lists, so the same module instance the shell imports then) is imported at once,
 * beside /api/kinds rather than after its answer, and the others are fetched beside it
 * (modulepreload) rather than once it is parsed: the view's first request leaves two round
 * trips sooner. While the server parses a model it answers every request late.
 */
const EARLY_TABS = new Map([['graph', ['views/graph.js', 'views/graph/viewfetch.js']]]);
const earlyModules = EARLY_TABS.get(state.get('tab'));
if (earlyModules) {
  const [entry, ...rest] = earlyModules.map((m) => new URL(`static/js/${m}`, document.baseURI).href);
  rest.forEach((href) => document.head.append(Object.assign(document.createElement('link'), { rel: 'modulepreload', href })));
  import(entry).catch(() => {}); // a failure is reported when the shell imports it
}

/**
 * The URLs of every kind's view modules, once the first ones are imported: those of the tab
 * the URL names when there is such a module (then `rest` lists the others, still to import),
 * else all of them (`rest` is empty). Rejects when /api/kinds fails.
 */
export const firstViews = early.kinds.then(async ({ kinds }) => {
  const urls = kinds.flatMap((k) => k.views);
  const tab = state.get('tab');
  const first = tab ? urls.filter((url) => url.split('/').pop() === `${tab}.js`) : [];
  await importViews(first.length ? first : urls);
  return { rest: first.length ? urls.filter((url) => !first.includes(url)) : [] };
});
firstViews.catch(() => {});
