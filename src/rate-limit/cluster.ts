// Without Redis, the workers of one `rolodex serve --workers N` still share one bucket per
// workspace and category: the buckets live in the primary, and each worker asks it over the
// cluster's IPC channel (a round trip of well under a millisecond on one machine), one message
// per bucket and turn, with leases for fast buckets (shared.ts). Should the primary not answer in
// time, the worker decides alone rather than stall the request.
import type { Worker } from 'node:cluster';
import { BucketStore, type Limits, type RateCategory, type RateLimiter, type Taken } from './bucket.ts';
import { MemoryRateLimiter } from './memory.ts';
import { type Decision, type Reply, SharedBuckets } from './shared.ts';

interface TakeRequest {
  rolodex: 'rate-take';
  id: number;
  key: string;
  rate: number;
  n: number;
  extra: number;
  give: number;
}

interface TakeReply extends Reply {
  rolodex: 'rate-taken';
  id: number;
}

const TIMEOUT_MS = 1000;

function isTakeRequest(m: unknown): m is TakeRequest {
  return typeof m === 'object' && m !== null && (m as TakeRequest).rolodex === 'rate-take';
}

function isTakeReply(m: unknown): m is TakeReply {
  return typeof m === 'object' && m !== null && (m as TakeReply).rolodex === 'rate-taken';
}

/** In the primary: keeps the buckets and answers every worker's requests. */
export function serveClusterRateLimits(cluster: { on(event: 'message', fn: (worker: Worker, message: unknown) => void): unknown }): BucketStore {
  const store = new BucketStore();
  cluster.on('message', (worker, message) => {
    if (!isTakeRequest(message)) return;
    const now = Date.now();
    const taken: Taken = store.takeMany(message.key, message.rate, message.n, message.extra, message.give, now);
    const reply: TakeReply = { rolodex: 'rate-taken', id: message.id, now, ...taken };
    if (worker.isConnected()) worker.send(reply);
  });
  return store;
}

/** The worker's end of the IPC channel (the process itself; a pair of ends in tests). */
export interface Channel {
  send?: ((message: TakeRequest) => unknown) | undefined;
  readonly connected?: boolean;
  on(event: 'message', fn: (m: unknown) => void): unknown;
  off(event: 'message', fn: (m: unknown) => void): unknown;
}

/** In a worker: asks the primary. */
export class ClusterRateLimiter implements RateLimiter {
  readonly limits: Limits;
  readonly #alone: MemoryRateLimiter;
  readonly #channel: Channel;
  readonly #buckets: SharedBuckets;
  readonly #pending = new Map<number, { resolve(r: Reply): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
  #next = 0;
  readonly #onMessage = (m: unknown) => {
    if (!isTakeReply(m)) return;
    const p = this.#pending.get(m.id);
    if (!p) return;
    this.#pending.delete(m.id);
    clearTimeout(p.timer);
    p.resolve(m);
  };

  constructor(limits: Limits, leaseMs: number, channel: Channel = process) {
    this.limits = limits;
    this.#alone = new MemoryRateLimiter(limits);
    this.#channel = channel;
    this.#buckets = new SharedBuckets({
      limits,
      take: (key, rate, n, extra, give) => this.#ask(key, rate, n, extra, give),
      reachable: () => !!channel.send && !!channel.connected,
      alone: (workspaceId, category) => this.#alone.consume(workspaceId, category),
      leaseMs,
      failed: () => {},
    });
    channel.on('message', this.#onMessage);
  }

  consume(workspaceId: string, category: RateCategory): Decision {
    return this.#buckets.consume(workspaceId, category);
  }

  #ask(key: string, rate: number, n: number, extra: number, give: number): Promise<Reply> {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error('the cluster primary did not answer'));
      }, TIMEOUT_MS);
      this.#pending.set(id, { resolve, reject, timer });
      this.#channel.send?.({ rolodex: 'rate-take', id, key, rate, n, extra, give });
    });
  }

  async close(): Promise<void> {
    this.#channel.off('message', this.#onMessage);
    // Requests still waiting for the primary are decided here rather than left hanging.
    for (const [id, p] of [...this.#pending]) {
      this.#pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new Error('closing'));
    }
  }
}
