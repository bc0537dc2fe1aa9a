// Deadlines on PostgreSQL statements (docs/reliability.md §Lost connections). A statement that
// gets no answer in time fails with DeadlineError, which counts as a lost connection: the request
// answers 503 service_unavailable instead of waiting. The server cancels a statement that runs
// too long itself (`statement_timeout`, set on the connections); the process's own deadline is
// that timeout and a grace, so it fires only when the server could not answer at all: a connection
// closed under a statement that the driver never failed, or one that is wedged. The lane whose
// statement missed its deadline is then replaced (`missed`, src/db/postgres/open.ts).
import type postgres from 'postgres';

/** A statement that got no answer before its deadline. */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
  readonly code = 'DATABASE_DEADLINE';
  constructor() {
    super('the database did not answer in time');
  }
}

/** What the server is given to answer in, and the grace the process adds before giving up. */
export const DEADLINE_GRACE_MS = 1000;

type Pending<T> = PromiseLike<T> & { cancel?: () => unknown; state?: unknown };

// What still waits on each client, to be failed at once when the client is given up.
const waiting = new WeakMap<object, Set<() => void>>();
const abandoned = new WeakSet<object>();

/** Fails, as DeadlineError, everything that waits on `client` (which is being replaced), and what is sent on it later. */
export function abandon(client: object): void {
  abandoned.add(client);
  const set = waiting.get(client);
  waiting.delete(client);
  for (const fail of set ?? []) fail();
}

/**
 * `query`'s outcome, or DeadlineError after `ms` (0: no deadline) or when `client` is abandoned;
 * `missed` runs when the deadline passed. A query that has not gone out yet is taken off its queue.
 */
export function withDeadline<T>(query: Pending<T>, ms: number, missed?: () => void, client?: object): Promise<T> {
  if (!ms) return Promise.resolve(query);
  if (client && abandoned.has(client)) {
    Promise.resolve(query).catch(() => {});
    return Promise.reject(new DeadlineError());
  }
  return new Promise<T>((resolve, reject) => {
    let set = client && waiting.get(client);
    if (client && !set) waiting.set(client, (set = new Set()));
    const giveUp = () => {
      clearTimeout(timer);
      reject(new DeadlineError());
    };
    set?.add(giveUp);
    const timer = setTimeout(() => {
      set?.delete(giveUp);
      reject(new DeadlineError());
      // Not sent yet (no backend state): taken off its queue. A sent one is not cancelled from
      // here: postgres.js drops the promise of a cancel request, and one to a database that is
      // gone would reject with nobody to handle it; the server's statement_timeout ends it.
      if (!query.state) query.cancel?.();
      missed?.();
    }, ms);
    query.then(
      (v) => {
        clearTimeout(timer);
        set?.delete(giveUp);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        set?.delete(giveUp);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the driver's own error, passed on as it came
        reject(err);
      },
    );
  });
}

/**
 * A result's rows without holes. postgres.js 3.4.9 counts a statement's rows into its result by
 * index and resets the count only when a statement completes: a statement that failed after
 * sending rows (cancelled by `statement_timeout`, or its connection ended) leaves the count
 * running, and the next statement on that connection gets that many empty slots before its own
 * rows. A row is an object, never undefined, so the slots are told apart and skipped.
 */
export function denseRows<R>(rows: postgres.RowList<postgres.Row[]>): R[] {
  const out: R[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row !== undefined) out.push(row as R);
  }
  return out;
}
