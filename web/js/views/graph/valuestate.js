// The URL keys of "Colour by" in the graph view, shared with the profiler's "Show in graph"
// (which sets them and opens the Graph tab), so that a copied link reproduces the colouring.
import * as state from '../../shared/state.js';

state.declare('graph_color', ''); // '' | params | flops | activations | profile
state.declare('graph_stat', 'mean'); // activations: mean | std | zero_fraction
state.declare('graph_prun', ''); // profile: its run ('' = the model's run)
state.declare('graph_worker', ''); // profile: its tag ('' = the run's first)
state.declare('graph_pstep', ''); // profile: the step it was logged at ('' = the newest)
state.declare('graph_pspan', 'all'); // profile: one of its ProfilerSteps, or all of them
state.declare('graph_op', ''); // profile: an operator whose costliest nodes to select

export { state };
