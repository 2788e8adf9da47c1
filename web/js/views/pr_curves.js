// The PR curves dashboard (shared logic in curves.js).
import { registerCurveView } from './curves.js';

registerCurveView('pr');
