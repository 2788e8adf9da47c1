// Every dashboard module, imported for its registerView() side effect. A new dashboard is one
// new module in this folder plus one line here.
import './scalars.js';
import './graph.js';
import './images.js';
import './audio.js';
import './text.js';
import './histograms.js';
import './distributions.js';
import './pr_curves.js';
import './roc_curves.js';
import './hparams.js';
import './embeddings.js';
import './figures.js';
