// The registry of dashboards. The shell (app.js) imports each kind's view modules (listed by
// /api/kinds); each calls registerView() once, and the shell shows a tab for every
// registered view whose `kind` has data (see /api/tags).
//
// A view is {id, label, kind, order, mount(ctx), unmount(), update(change)} where
//   ctx    = {main, settings, runs, tagsOf(kind), info()} given by the shell: `main` and
//            `settings` are the view's elements, `runs` the run list (selection and colours),
//            `tagsOf(kind)` is {run: [tags]} as last loaded, `info()` the last /api/info;
//   change = {data: bool, runs: bool} says what changed since the last call.

const registry = new Map();

/** Register a view; ids must be unique. */
export function registerView(view) {
  for (const key of ['id', 'label', 'kind', 'mount', 'unmount', 'update']) {
    if (!(key in view)) throw new Error(`view is missing "${key}"`);
  }
  if (registry.has(view.id)) throw new Error(`view "${view.id}" registered twice`);
  registry.set(view.id, { order: 100, ...view });
}

/** All views, in tab order. */
export function allViews() {
  return [...registry.values()].sort((a, b) => a.order - b.order || a.label.localeCompare(b.label));
}

/**
 * registerView() arguments around a view class: `mount` makes one instance, `update` and
 * `unmount` call its `update(change)` and `destroy()`. Other keys (order, needsPlotly,
 * available, ...) pass through.
 */
export function classView({ View, ...spec }) {
  let view = null;
  return {
    ...spec,
    mount(ctx) {
      view = new View(ctx);
    },
    update(change) {
      if (view) view.update(change);
    },
    unmount() {
      if (view) view.destroy();
      view = null;
    },
  };
}
