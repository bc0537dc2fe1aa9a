// Gathering per turn of the event loop: the calls made in one turn (the requests that arrived
// together) are handed over at its end as one batch, by key, so that their work can be done once
// for all of them (the Redis rate limits, src/rate-limit/redis.ts; point reads on either
// database, src/db/batched.ts). Every item of a batch was added before the batch is handed
// over, so work started then starts after each of its callers asked.

/** `add(key, item)`: the item joins the batch of this turn; `flush` gets the batch at its end. */
export function perTurn<K, I>(flush: (batch: Map<K, I[]>) => void): (key: K, item: I) => void {
  let batch: Map<K, I[]> | undefined;
  return (key, item) => {
    if (!batch) {
      const current = (batch = new Map<K, I[]>());
      setImmediate(() => {
        batch = undefined;
        flush(current);
      });
    }
    const items = batch.get(key);
    if (items) items.push(item);
    else batch.set(key, [item]);
  };
}
