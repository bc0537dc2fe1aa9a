// The lease of one claim of the outbox (docs/emails.md §Delivery), as its holder knows it. The
// database sets a lease's end from its own clock, at a moment no earlier than the statement was
// sent; so the holder counts the lease from just before it sent the claim (or the last renewal
// that answered), on its own monotonic clock: a bound that never runs late, whatever the clocks
// of the instances say. A message is started only while at least a third of the lease is left;
// short of that the holder renews first and sends only rows the renewal says it still holds. A
// row whose lease ran out (a slow database, a process starved of CPU) may have been taken by
// another dispatcher: sending it here too would deliver it twice.
import type { Logger } from 'pino';
import type { Db } from '../db/index.ts';
import * as outbox from '../emails/outbox-repository.ts';

export interface Lease {
  readonly token: string;
  /** Whether `emailId` may be sent now: held, with at least a third of the lease left. */
  holds(emailId: string): Promise<boolean>;
  /** Stops renewing. */
  end(): void;
}

/** How a lease is renewed: the ids of the rows `token` still holds. The webhook outbox passes its own. */
export type Renew = (db: Db['kysely'], token: string, leaseMs: number) => Promise<string[]>;

export function keepLease(
  db: Db,
  logger: Logger,
  token: string,
  leaseMs: number,
  claimedAt: number,
  ids: readonly string[],
  renewRows: Renew = outbox.renewLease,
): Lease {
  let heldUntil = claimedAt + leaseMs;
  let held = new Set(ids);
  let renewing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let ended = false;
  const margin = leaseMs / 3;

  function renew(): Promise<void> {
    renewing ??= (async () => {
      const sentAt = performance.now();
      try {
        held = new Set(await renewRows(db.kysely, token, leaseMs));
        heldUntil = sentAt + leaseMs;
      } catch (err) {
        logger.warn({ err }, 'could not renew the outbox lease');
      } finally {
        renewing = null;
        schedule();
      }
    })();
    return renewing;
  }

  // Renewed every third of the lease, counted from the last renewal that answered; a failed one is
  // tried again soon.
  function schedule(): void {
    if (ended) return;
    if (timer) clearTimeout(timer);
    const due = heldUntil - 2 * margin - performance.now();
    timer = setTimeout(() => void renew(), Math.max(margin / 10, Math.min(due, margin)));
  }
  schedule();

  return {
    token,
    async holds(emailId) {
      if (performance.now() > heldUntil - margin) await renew();
      return held.has(emailId) && performance.now() <= heldUntil - margin;
    },
    end() {
      ended = true;
      if (timer) clearTimeout(timer);
    },
  };
}
