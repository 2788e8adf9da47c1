// "Show in graph" from the profiler: open the Graph tab on the profiled model, coloured by
// profiler time, with the costliest nodes of one operator selected. The pairing: the graph
// logged in the profile's run (the VisualDL callback logs both there; a PyTorch run gets one
// with add_graph beside its traces), its newest step; else, with no graph logged in the run,
// the only model file the server was started with. Nothing else is guessed.
import { getJSON } from '../../shared/api.js';
import { state } from './valuestate.js';

/** The model to show the profile of `run` on, or null (see above). */
export function pairedModel(models, run) {
  const logged = models.filter((m) => m.source === 'log' && m.run === run);
  if (logged.length) return logged.reduce((a, b) => ((b.step || 0) > (a.step || 0) ? b : a));
  const files = models.filter((m) => m.source === 'file');
  return files.length === 1 ? files[0] : null;
}

/** Open the Graph tab for the profile of `run`/`tag` logged at `step` ('' = the newest),
 *  over `span` (one ProfilerStep's number, or 'all'), and operator `op`; throws when no model
 *  pairs. */
export async function showInGraph({ run, tag, step = '', span = 'all', op }) {
  const { models } = await getJSON('api/graph/models');
  const model = pairedModel(models, run);
  if (!model) throw new Error(`no graph to show it on: log the model in run ${run} (add_graph) or start visualdl with --model`);
  state.set({ graph_model: model.id, graph_color: 'profile', graph_prun: run, graph_worker: tag,
    graph_pstep: String(step ?? ''), graph_pspan: String(span || 'all'), graph_op: op || '' });
  window.dispatchEvent(new CustomEvent('vdl:open-view', { detail: { id: 'graph' } }));
  return model;
}
