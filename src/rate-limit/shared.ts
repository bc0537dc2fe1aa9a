// Buckets kept by another process, Redis (redis.ts) or the cluster primary (cluster.ts), as one
// process asks for them. The requests of one bucket that arrive in the same turn of the event loop
// share one call that takes up to n tokens at once, with the very decisions n calls in a row would
// have given (the k-th request sees the tokens the k-1 before it left). A call for a fast bucket
// may also lease tokens that serve this process's next requests of it without a call (lease.ts).
// Why: docs/performance.md §Redis rate limits: pipelining, one call per bucket, leases.
import { perTurn } from '../lib/per-turn.ts';
import { bucketKey, decide, type Limits, type RateCategory, type RateDecision, type Taken } from './bucket.ts';
import { LastKnown } from './last-known.ts';
import { Leases } from './lease.ts';

export type Decision = RateDecision | null | Promise<RateDecision | null>;

/** What the keeper answered: bucket.ts `takeMany`'s outcome, with its clock in ms. */
export interface Reply extends Taken {
  now: number;
}

/**
 * Asks the keeper of the bucket `key` for n tokens, `extra` more as a lease, `give` back first.
 * A keeper that can be late calls `late` once the call is past its deadline, still unanswered.
 */
export type Take = (key: string, rate: number, n: number, extra: number, give: number, late: () => void) => Promise<Reply>;

interface Waiter {
  workspaceId: string;
  category: RateCategory;
  rate: number;
  resolve(d: Decision): void;
}

export interface SharedBucketsOptions {
  limits: Limits;
  /** Put before each bucket's key (Redis's key prefix). */
  prefix?: string;
  take: Take;
  /** Whether the keeper can be asked now; if not, requests are decided alone. */
  reachable(): boolean;
  /** Decides a request without the keeper: unreachable, or its call failed. */
  alone(workspaceId: string, category: RateCategory): Decision;
  /** How long leased tokens serve (lease.ts); 0 asks for every request. */
  leaseMs: number;
  /** Monotonic milliseconds for leases (tests). */
  clock?: () => number;
  /** Told of each failed call, before its requests are decided alone. */
  failed(err: Error): void;
  /** Told of each request refused on the last known level because its call was late. */
  decidedLate?(): void;
}

export class SharedBuckets {
  readonly #o: SharedBucketsOptions;
  readonly #leases: Leases;
  readonly #known: LastKnown;
  /** Requests by bucket, gathered until the end of the turn (src/lib/per-turn.ts). */
  readonly #gather = perTurn<string, Waiter>((batch) => this.#flush(batch));

  constructor(o: SharedBucketsOptions) {
    this.#o = o;
    const clock = o.clock ?? (() => performance.now());
    this.#leases = new Leases(o.leaseMs, clock);
    this.#known = new LastKnown(clock);
  }

  /** A lease's decision at once, else the next call's (or one decided alone). */
  consume(workspaceId: string, category: RateCategory): Decision {
    const rate = this.#o.limits[category];
    if (!rate) return null;
    const key = (this.#o.prefix ?? '') + bucketKey(workspaceId, category);
    const leased = this.#leases.spend(key, rate);
    if (leased) return leased;
    if (!this.#o.reachable()) return this.#o.alone(workspaceId, category);
    return new Promise((resolve) => this.#gather(key, { workspaceId, category, rate, resolve }));
  }

  /** One call per bucket for the requests gathered in this turn. */
  #flush(batch: Map<string, Waiter[]>): void {
    for (const [key, gathered] of batch) {
      const { workspaceId, category, rate } = gathered[0] as Waiter;
      // A lease that arrived after these requests were gathered serves them first.
      let served = 0;
      for (let d; served < gathered.length && (d = this.#leases.spend(key, rate)); served++) gathered[served]!.resolve(d);
      if (served === gathered.length) continue;
      const waiters = served === 0 ? gathered : gathered.slice(served);
      const ask = this.#leases.ask(key, rate, waiters.length);
      let waiting = waiters;
      // A late keeper is busy, not gone: what it last said of the bucket may refuse these requests
      // at once (last-known.ts); it never allows them, so they otherwise wait for its answer. Tokens
      // the call takes for requests refused meanwhile are not spent; the bucket had next to none.
      const late = () => {
        const refused = this.#known.refusal(key, rate);
        if (!refused) return;
        for (const w of waiting) {
          this.#o.decidedLate?.();
          w.resolve(refused);
        }
        waiting = [];
      };
      this.#o.take(key, rate, waiters.length, ask.extra, ask.give, late).then(
        ({ taken, before, now, leased }) => {
          // As if one after another: the i-th request sees what the i-1 before it left.
          waiting.forEach((w, i) => w.resolve(i < taken ? decide(rate, before - i, true, now) : decide(rate, before - taken, false, now)));
          this.#leases.grant(key, ask, leased, before - taken - leased, now);
          this.#known.note(key, before - taken - leased, now);
        },
        (err: Error) => {
          this.#leases.drop(key);
          this.#o.failed(err);
          for (const w of waiting) w.resolve(this.#o.alone(workspaceId, category));
        },
      );
    }
  }
}
