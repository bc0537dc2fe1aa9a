// Token leases for buckets kept by another process, Redis or the cluster primary (shared.ts;
// docs/design.md §Rate limits, "Leases"). A process that asks for tokens of a fast bucket may take
// a few more than its waiting requests need and spend them on its next requests of that bucket
// without a round trip. Why this is safe:
// - every leased token was taken from the shared bucket, atomically, so processes never hand out
//   the same token twice;
// - a token serves only within `ms` of the moment its call was sent, so in any interval at most
//   rate × ms / 1000 more requests pass than the bucket alone would let through;
// - a lease is at most those tokens and at most half of what the bucket had left, so a bucket's
//   last tokens are not leased;
// - what a process did not spend goes back to the bucket with its next call for it; a process
//   that never calls again for that bucket loses at most one lease, less than `ms` of refill.
// A bucket slower than 1,000 / ms per second (under 100/s with the default 10 ms, so the default
// 25/s) never leases: each of its requests is decided by the keeper alone.
import { decide, type RateDecision } from './bucket.ts';

interface Lease {
  tokens: number;
  /** Local clock: the lease serves until then. */
  until: number;
  /** Tokens the bucket held after the call that granted it, for X-RateLimit-Remaining. */
  after: number;
  /** The keeper's clock at the grant, and ours when its reply arrived, for X-RateLimit-Reset. */
  keeperNow: number;
  at: number;
  granted: number;
}

/** What a call for one bucket asks beyond its waiting requests. */
export interface Ask {
  /** Tokens to lease, if the bucket can spare them. */
  extra: number;
  /** Unspent tokens of an expired lease, given back to the bucket first. */
  give: number;
  /** Local clock when the call is sent. */
  sentAt: number;
}

export class Leases {
  readonly #ms: number;
  readonly #clock: () => number;
  readonly #byKey = new Map<string, Lease>();
  #sweeps = 0;

  constructor(ms: number, clock: () => number) {
    this.#ms = ms;
    this.#clock = clock;
  }

  /** A decision from this process's lease of the bucket, or undefined when it has to ask. */
  spend(key: string, rate: number): RateDecision | undefined {
    const lease = this.#byKey.get(key);
    if (!lease || lease.tokens === 0) return undefined;
    const now = this.#clock();
    if (now >= lease.until) return undefined;
    const view = lease.after + lease.tokens;
    lease.tokens--;
    return decide(rate, view, true, lease.keeperNow + (now - lease.at));
  }

  /**
   * What the next call for `key` asks: a lease that doubles what the last one spent, up to the
   * bucket's refill in `ms`, so a bucket used now and then takes little; and the expired lease's
   * leftovers back. The lease is forgotten here: its tokens travel with the call.
   */
  ask(key: string, rate: number, waiting: number): Ask {
    const sentAt = this.#clock();
    const cap = Math.floor((rate * this.#ms) / 1000);
    if (cap < 1) return { extra: 0, give: 0, sentAt };
    const last = this.#byKey.get(key);
    const spent = last ? last.granted - last.tokens : 0;
    let give = 0;
    if (last && sentAt >= last.until) {
      give = last.tokens;
      this.#byKey.delete(key);
    }
    return { extra: Math.min(cap, Math.max(waiting, 2 * spent)), give, sentAt };
  }

  /** Keeps what the keeper leased; the tokens the bucket held after the call were `after`. */
  grant(key: string, ask: Ask, leased: number, after: number, keeperNow: number): void {
    if (++this.#sweeps >= 10_000) this.#sweep();
    if (ask.extra === 0) return;
    const now = this.#clock();
    const until = ask.sentAt + this.#ms;
    const held = this.#byKey.get(key);
    // Another call's lease still serving joins this one but keeps its own, earlier, end: no token
    // outlives its ms. One that ended meanwhile is dropped, at most a lease's worth.
    const live = held && now < held.until && held.tokens > 0 ? held : undefined;
    const tokens = leased + (live ? live.tokens : 0);
    const end = live ? Math.min(live.until, until) : until;
    this.#byKey.set(key, { tokens, until: end, after, keeperNow, at: now, granted: tokens });
  }

  /** A lease whose call failed is dropped; its tokens are lost, at most one lease's worth. */
  drop(key: string): void {
    this.#byKey.delete(key);
  }

  /**
   * Forgets leases that ended over a second ago: their buckets have refilled completely since
   * (the burst is one second's quota), so their leftovers no longer matter.
   */
  #sweep(): void {
    this.#sweeps = 0;
    const now = this.#clock();
    for (const [key, l] of this.#byKey) if (now - l.until >= 1000) this.#byKey.delete(key);
  }
}
