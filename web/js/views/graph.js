// The model graph view's entry: it registers the view (graph/view.js) and, when the page
// opens on this tab, asks for what the view shows first (the model's summary and first
// view, see viewfetch.js) before loading the view's modules, so that those requests and the
// server's parse run while some forty modules load. The view's modules are imported here
// (top-level await), so the tab is registered once they are in.
import { registerView, classView } from '../shared/views.js';
import * as state from '../shared/state.js';
import { askEarly, askModels, viewOptions } from './graph/viewfetch.js';

state.declare('graph_model', '');

// Whether the server was started with --model: then the tab shows even without logs. Asked
// once, before the shell first decides which tabs exist; the view's first list is this one.
const models = askModels();
if (state.get('tab') === 'graph') askEarly(models, viewOptions());
const [{ GraphView }, modelsGiven] = await Promise.all([
  import('./graph/view.js'),
  models.then((body) => body.models.length > 0, () => false),
]);

registerView(classView({
  id: 'graph',
  label: 'Graph',
  kind: 'graph',
  order: 80,
  needsPlotly: false, // drawn as SVG or WebGL: the tab need not wait for plotly.js
  available: () => modelsGiven,
  View: GraphView,
}));
