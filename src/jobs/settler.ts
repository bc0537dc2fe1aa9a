// The outcomes of a dispatcher's deliveries wait here for their commit: one settle statement at a
// time, each taking every outcome that arrived while the one before ran, so a round's deliveries
// that end together are written together (docs/events.md §Delivery, docs/emails.md §Delivery). A settle
// handles its own failure (the lease brings the rows back); `drain` waits for the last one.

export interface Settler<T> {
  add(outcome: T): void;
  drain(): Promise<void>;
}

export function createSettler<T>(settle: (batch: T[]) => Promise<void>): Settler<T> {
  const pending: T[] = [];
  let running: Promise<void> | null = null;
  const run = async (): Promise<void> => {
    while (pending.length > 0) await settle(pending.splice(0));
  };
  return {
    add(outcome) {
      pending.push(outcome);
      running ??= run().finally(() => (running = null));
    },
    async drain() {
      while (running) await running;
    },
  };
}
