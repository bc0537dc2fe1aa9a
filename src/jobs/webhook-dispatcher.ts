// The webhook dispatcher (docs/events.md §Delivery): delivers the webhook outbox after commit,
// never inside a transaction, as the mail dispatcher does the e-mail outbox. A commit that queued
// deliveries, in any process sharing the database, starts a round at once (a commit signal,
// src/db/signals.ts); the poll finds what a lost signal, or a write without one, left. Each round claims due rows under a token with a lease (src/jobs/mail-lease.ts),
// starts a POST only while it holds the row with time to spare, and settles while it holds it: a
// 2xx → the row leaves the outbox (many to a statement); anything else → tried again with
// exponential backoff and jitter, until the endpoint has been failing for WEBHOOK_DISABLE_AFTER_MS
// (24 hours), when it is disabled. A claim takes at most one row per subscription and object (the
// oldest), so one object's events arrive in order, and shares its rows among the endpoints with
// due rows, which the round starts in turns (each one's first row before any second): another
// endpoint's backlog, however long, holds up an endpoint for no more than the round under way.
// A failing endpoint is tried one delivery at a time (a probe of the claim), and once one of its
// deliveries fails in a round its rows not yet started are given back: it holds up no other
// endpoint's deliveries for long. So are those of an
// endpoint still answering an attempt after WEBHOOK_POLL_MS: a slow endpoint is sent the rows
// started before it showed itself slow, and the round, which the next claim waits for, ends with
// those attempts, not after every row of it the claim took. A crash after the
// endpoint answered and before the settle committed sends the event again when the lease ends,
// with the same webhook-id: delivery is at least once.
import { startPoller } from './poller.ts';
import { createSettler, type Settler } from './settler.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { WebhookConfig } from '../config.ts';
import { type Db, onSignal } from '../db/index.ts';
import * as claims from '../webhooks/claim-repository.ts';
import * as outbox from '../webhooks/repository.ts';
import { deliver } from '../webhooks/sender.ts';
import { databaseGauge, type Metrics } from '../metrics/registry.ts';
import { keepLease } from './mail-lease.ts';

export interface WebhookDispatcherDeps {
  db: Db;
  logger: Logger;
  webhooks: WebhookConfig;
}

export interface Dispatcher {
  stop(): Promise<void>;
}

/** Delay before attempt `attempts + 1`: doubling from the base up to the maximum, ±25 % jitter. */
export function webhookBackoffMs(cfg: Pick<WebhookConfig, 'retryBaseMs' | 'retryMaxMs'>, attempts: number, random = Math.random()): number {
  const plain = Math.min(cfg.retryBaseMs * 2 ** Math.max(0, attempts - 1), cfg.retryMaxMs);
  return Math.round(plain * (0.75 + random * 0.5));
}

export function startWebhookDispatcher(deps: WebhookDispatcherDeps): Dispatcher {
  const { db, logger, webhooks: cfg } = deps;
  const instance = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let round = 0;
  /** The settles of the last round with rows, which may still be committing. */
  let tail: Promise<void> = Promise.resolve();

  /** Delivered rows waiting for a commit, settled together (src/jobs/settler.ts). */
  function settler(token: string): Settler<outbox.Settled> {
    return createSettler(async (batch) => {
      try {
        const settled = await outbox.settleDelivered(db.kysely, token, batch);
        const late = batch.filter((r) => r.delivered && !settled.has(r.id));
        if (late.length > 0) logger.warn({ deliveries: late.length }, 'webhooks delivered after their lease ran out; they may be sent again (same webhook-id)');
      } catch (err) {
        logger.warn({ err, deliveries: batch.length }, 'could not settle delivered webhooks; the lease will bring them back (same webhook-id)');
      }
    });
  }

  async function once(): Promise<number> {
    const token = `${instance}:${++round}`;
    const claimedAt = performance.now();
    const rows = await claims.claimDue(db.kysely, { token, leaseMs: cfg.leaseMs, limit: cfg.concurrency * 8, probes: Math.max(1, cfg.concurrency >> 1) });
    if (rows.length === 0) return 0;
    const lease = keepLease(
      db,
      logger,
      token,
      cfg.leaseMs,
      claimedAt,
      rows.map((r) => r.id),
      claims.renewLease,
    );
    const settled = settler(token);
    const untried: string[] = [];
    /** Subscriptions that failed in this round: their rows not yet started are given back untried. */
    const failing = new Set<string>();
    /**
     * Subscriptions with an attempt of this round unanswered after WEBHOOK_POLL_MS: their rows not
     * yet started are given back too, so that the round lasts about one of their attempts rather
     * than all of them, and no other endpoint waits behind them (docs/events.md §Delivery).
     */
    const slow = new Set<string>();
    try {
      const { events, subs } = await outbox.deliveriesOf(db.kysely, rows);
      const queue = [...rows];
      const worker = async () => {
        for (let row = queue.shift(); row; row = queue.shift()) {
          if (poller.stopping || failing.has(row.subscription_id) || slow.has(row.subscription_id) || !(await lease.holds(row.id))) {
            untried.push(row.id);
            continue;
          }
          const sub = subs.get(row.subscription_id);
          const body = events.get(row.event_id);
          if (!sub || body === undefined) {
            // The subscription was removed or the event purged meanwhile: nothing to send, and no
            // answer; a row that failed before ends the streak as a give-up does (settleDelivered).
            settled.add({ id: row.id, subscription_id: row.subscription_id, delivered: false });
            continue;
          }
          const slowAfter = setTimeout(() => slow.add(row.subscription_id), cfg.pollMs);
          const attempt = await deliver({
            url: sub.url,
            secret: sub.secret,
            eventId: row.event_id,
            body,
            timeoutMs: cfg.timeoutMs,
            allowPrivate: cfg.allowPrivate,
          }).finally(() => clearTimeout(slowAfter));
          if (attempt.ok) {
            settled.add({ id: row.id, subscription_id: row.subscription_id, delivered: true });
            continue;
          }
          failing.add(row.subscription_id);
          const error = attempt.error ?? 'ERROR';
          const outcome = await outbox
            .failed(db.kysely, row, token, { delayMs: webhookBackoffMs(cfg, row.attempts), error, disableAfterMs: cfg.disableAfterMs })
            .catch((err: unknown) => {
              logger.warn({ err }, 'could not record a failed webhook; the lease will bring it back');
              return false as const;
            });
          logger.warn({ subscription: sub.id, eventId: row.event_id, error, attempts: row.attempts, outcome }, 'webhook delivery failed');
          if (outcome === 'disabled') logger.warn({ subscription: sub.id }, 'webhook endpoint failing for too long; disabled');
          if (outcome === 'given_up') logger.warn({ subscription: sub.id, eventId: row.event_id }, 'webhook delivery failing for too long; given up');
        }
      };
      await Promise.all(Array.from({ length: Math.min(cfg.concurrency, rows.length) }, worker));
    } catch (err) {
      lease.end();
      throw err;
    }
    // Every row is sent or left untried; committing the outcomes, under the lease, is the only work
    // left, and the next claim does not wait for it: a row sent and not yet settled is still leased,
    // so neither it nor a later event of its object can be claimed meanwhile. At most one round's
    // settles run beside the next round.
    await tail;
    tail = (async () => {
      try {
        await settled.drain();
        if (untried.length > 0) await claims.release(db.kysely, token, untried);
      } finally {
        lease.end();
      }
    })().catch((err: unknown) => logger.warn({ err }, 'could not give back untried webhooks; the lease will bring them back'));
    return rows.length;
  }

  const poller = startPoller(once, { pollMs: cfg.pollMs, logger, what: 'webhook' });
  const unsubscribe = onSignal(db, outbox.QUEUED, () => poller.wake());
  return {
    async stop() {
      unsubscribe();
      await poller.stop();
      await tail;
    },
  };
}

/** /metrics: the webhook deliveries still to make, read from the database at each scrape. */
export function webhookDepthGauge(metrics: Metrics, db: Db): void {
  databaseGauge(metrics, 'rolodex_webhook_outbox_depth', 'Webhook deliveries queued and not yet made (retries included).', () => outbox.outboxDepth(db.kysely));
}
