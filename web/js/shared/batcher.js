// Coalesces many small requests made in the same moment into one round trip: a page of 50
// charts becoming visible at once costs one POST, not 50 GETs.

/**
 * createBatcher(fetchMany, delayMs) -> request(item) -> Promise<result>
 * fetchMany(items) must resolve to an array of results in the same order.
 */
export function createBatcher(fetchMany, delayMs = 16) {
  let pending = [];
  let timer = null;

  async function flush() {
    timer = null;
    const batch = pending;
    pending = [];
    try {
      const results = await fetchMany(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i]));
    } catch (err) {
      batch.forEach((p) => p.reject(err));
    }
  }

  return function request(item) {
    return new Promise((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (timer === null) timer = setTimeout(flush, delayMs);
    });
  };
}
