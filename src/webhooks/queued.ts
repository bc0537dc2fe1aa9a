// The signal that a committed write queued webhook deliveries (docs/events.md §Delivery): the
// dispatcher of the process that wrote starts a round at once instead of at its next poll.
// Process-local; a write committed by another process is found by that poll.
const listeners = new Set<() => void>();

/** Calls `fn` after each commit that queued deliveries in this process; returns the unsubscribe. */
export function onQueued(fn: () => void): () => void {
  listeners.add(fn);
  return () => void listeners.delete(fn);
}

export function queued(): void {
  for (const fn of listeners) fn();
}
