// Without Redis, the workers of one `rolodex serve --workers N` still share one bucket per
// workspace and category: the buckets live in the primary, and each worker asks it over the
// cluster's IPC channel (a round trip of well under a millisecond on one machine). Should the
// primary not answer in time, the worker decides alone rather than stall the request.
import type { Worker } from 'node:cluster';
import { BucketStore, bucketKey, type Limits, type RateCategory, type RateDecision, type RateLimiter } from './bucket.ts';
import { MemoryRateLimiter } from './memory.ts';

interface TakeRequest {
  rolodex: 'rate-take';
  id: number;
  key: string;
  rate: number;
}

interface TakeReply {
  rolodex: 'rate-decision';
  id: number;
  decision: RateDecision;
}

const TIMEOUT_MS = 1000;

function isTakeRequest(m: unknown): m is TakeRequest {
  return typeof m === 'object' && m !== null && (m as TakeRequest).rolodex === 'rate-take';
}

function isTakeReply(m: unknown): m is TakeReply {
  return typeof m === 'object' && m !== null && (m as TakeReply).rolodex === 'rate-decision';
}

/** In the primary: keeps the buckets and answers every worker's requests. */
export function serveClusterRateLimits(cluster: { on(event: 'message', fn: (worker: Worker, message: unknown) => void): unknown }): BucketStore {
  const store = new BucketStore();
  cluster.on('message', (worker, message) => {
    if (!isTakeRequest(message)) return;
    const reply: TakeReply = { rolodex: 'rate-decision', id: message.id, decision: store.take(message.key, message.rate) };
    if (worker.isConnected()) worker.send(reply);
  });
  return store;
}

/** In a worker: asks the primary. */
export class ClusterRateLimiter implements RateLimiter {
  readonly limits: Limits;
  readonly #alone: MemoryRateLimiter;
  readonly #pending = new Map<number, { alone(): void; resolve(d: RateDecision): void; timer: NodeJS.Timeout }>();
  #next = 0;
  readonly #onMessage = (m: unknown) => {
    if (!isTakeReply(m)) return;
    const p = this.#pending.get(m.id);
    if (!p) return;
    this.#pending.delete(m.id);
    clearTimeout(p.timer);
    p.resolve(m.decision);
  };

  constructor(limits: Limits) {
    this.limits = limits;
    this.#alone = new MemoryRateLimiter(limits);
    process.on('message', this.#onMessage);
  }

  consume(workspaceId: string, category: RateCategory): RateDecision | null | Promise<RateDecision | null> {
    const rate = this.limits[category];
    if (!rate) return null;
    if (!process.send || !process.connected) return this.#alone.consume(workspaceId, category);
    const id = ++this.#next;
    return new Promise((resolve) => {
      const alone = () => {
        this.#pending.delete(id);
        resolve(this.#alone.consume(workspaceId, category));
      };
      const timer = setTimeout(alone, TIMEOUT_MS);
      this.#pending.set(id, { alone, resolve, timer });
      const request: TakeRequest = { rolodex: 'rate-take', id, key: bucketKey(workspaceId, category), rate };
      process.send?.(request);
    });
  }

  async close(): Promise<void> {
    process.off('message', this.#onMessage);
    // Requests still waiting for the primary are decided here rather than left hanging.
    for (const p of [...this.#pending.values()]) {
      clearTimeout(p.timer);
      p.alone();
    }
  }
}
