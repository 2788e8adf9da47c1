// The controller of a card that shows one step at a time with a step slider (images, audio,
// figures, PR/ROC curves). It fetches the tag's index when the data changed, keeps the slider
// in sync with the other cards when asked, and calls `show(index, data)` for the step to show.
import { createStepSlider } from './stepslider.js';

/**
 * steppedCard(cardCtx, {fetch, show, content, label})
 *   cardCtx  {run, tag, key, card, body, grid} from RunTagGrid
 *   fetch()  -> Promise<{steps, wall_times, ...}> the index (or the whole data) of the tag
 *   show(i, data) draws entry i; may return a promise
 *   content  the element(s) above the slider
 */
export function steppedCard(cardCtx, { fetch, show, content, destroy }) {
  const { key, card, body, grid, tag, run } = cardCtx;
  let data = null;
  const slider = createStepSlider({
    label: `${tag} (${run})`,
    onChange: (i, { user }) => {
      if (!data) return;
      card.dataset.step = String(data.steps[i]);
      Promise.resolve(show(i, data)).catch((err) => grid.showError(card, err));
      if (user) grid.stepMoved(key, data.steps[i]);
    },
  });
  body.append(...[].concat(content), slider.element);

  return {
    slider,
    async refresh() {
      const fresh = await fetch();
      data = fresh;
      card.dataset.total = String(fresh.steps.length);
      slider.setEntries(fresh.steps, fresh.wall_times);
      const synced = grid.syncedStep();
      if (synced !== null) slider.setStep(synced);
    },
    showStep(step) {
      slider.setStep(step);
    },
    destroy() {
      if (destroy) destroy();
    },
  };
}
