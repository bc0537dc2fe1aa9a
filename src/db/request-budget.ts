// One deadline for all of a request's waits on PostgreSQL (docs/reliability.md §Lost connections).
// Each wait has a deadline of its own (a place among the transactions, a connection, a statement's
// answer: src/db/postgres/deadline.ts), and those add up: a write that waited for a place and then for
// its statements could wait twice the deadline before its 503, more with a second transaction.
// An API request therefore starts a budget of one deadline, carried by its async context; every
// wait of the request ends at the budget's end at the latest, as DeadlineError (503). The waits
// themselves go on: a statement already sent runs to its end and its connection goes back to the
// pool only then, and a lane is still replaced only when a statement missed its own full deadline,
// so the budget never makes a healthy connection look lost. Work nobody waits for (follow-ups
// after COMMIT that the answer does not wait for, a batch of reads gathered from several requests)
// runs outside any request's budget. Once the request has answered, its budget no longer applies.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeadlineError } from './postgres/deadline.ts';

interface Budget {
  /** performance.now() at which every wait of the request ends. */
  end: number;
  done: boolean;
  expired: boolean;
  timer?: NodeJS.Timeout;
  /** Rejections of the waits under way. */
  waiting: Set<(err: Error) => void>;
}

const current = new AsyncLocalStorage<Budget>();
const NONE: Budget = { end: 0, done: true, expired: false, waiting: new Set() };

/**
 * Starts the budget of the request whose async context this is (its first hook), `ms` long (0 or
 * undefined: none). Returns what ends it once the request has answered.
 */
export function startRequestBudget(ms: number | undefined): () => void {
  if (!ms) {
    // Whatever the connection's earlier requests left in this context does not carry over.
    current.enterWith(NONE);
    return () => {};
  }
  const budget: Budget = { end: performance.now() + ms, done: false, expired: false, waiting: new Set() };
  current.enterWith(budget);
  return () => {
    budget.done = true;
    clearTimeout(budget.timer);
  };
}

function active(): Budget | undefined {
  const b = current.getStore();
  return b && !b.done ? b : undefined;
}

/** What is left of the request's budget for a wait whose own deadline is `ms` (0: none); at least 1 ms. */
export function budgetLeft(ms: number): number {
  const b = active();
  if (!b) return ms;
  const left = Math.max(1, Math.ceil(b.end - performance.now()));
  return ms ? Math.min(ms, left) : left;
}

/** `p`'s outcome, or DeadlineError once the request's budget has run out; `p` goes on either way. */
export function withinBudget<T>(p: Promise<T>): Promise<T> {
  const b = active();
  if (!b) return p;
  if (b.expired) {
    p.catch(() => {});
    return Promise.reject(new DeadlineError());
  }
  b.timer ??= setTimeout(
    () => {
      b.expired = true;
      for (const reject of b.waiting) reject(new DeadlineError());
      b.waiting.clear();
    },
    Math.max(0, b.end - performance.now()),
  );
  let fail!: (err: Error) => void;
  const late = new Promise<never>((_, reject) => (fail = reject));
  b.waiting.add(fail);
  const done = () => void b.waiting.delete(fail);
  const out = Promise.race([p, late]);
  out.then(done, done);
  return out;
}

/** Runs `fn` outside any request's budget: work no request waits for. */
export function outsideBudget<T>(fn: () => T): T {
  return current.exit(fn);
}
