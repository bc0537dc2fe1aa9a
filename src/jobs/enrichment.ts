// The enrichment runner (docs/enrichment.md §Runs): every server process may run one. Each round
// claims due runs under a token of its own with a lease (src/enrichment/repository.ts), executes
// them outside any request, and writes each outcome only while it still holds the run; the lease
// is renewed while they execute. A run left `running` by a process that died comes due again when
// its lease ends and is retried, up to ENRICH_MAX_ATTEMPTS claims, then failed. Claims never
// overlap (SKIP LOCKED on PostgreSQL, one writer on SQLite), and a record has one run in flight.
import { startPoller } from './poller.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { EnrichmentConfig } from '../config.ts';
import type { Db } from '../db/types.ts';
import { type ExecuteEnv, executeRun } from '../enrichment/execute.ts';
import * as repo from '../enrichment/repository.ts';
import { isoNow } from '../lib/ids.ts';

export interface EnrichmentRunner {
  /** Looks for due runs now rather than at the next poll. */
  wake(): void;
  /** Stops claiming and lets the runs under way finish. */
  stop(): Promise<void>;
}

export function startEnrichmentRunner(deps: {
  db: Db;
  logger: Logger;
  config: EnrichmentConfig;
  execute: Omit<ExecuteEnv, 'timeoutMs' | 'allowPrivate'>;
}): EnrichmentRunner {
  const { db, logger, config } = deps;
  const env: ExecuteEnv = { ...deps.execute, timeoutMs: config.timeoutMs, allowPrivate: config.allowPrivate };
  const instance = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let round = 0;

  async function once(): Promise<number> {
    const token = `${instance}:${++round}`;
    const rows = await repo.claimDue(db.kysely, {
      token,
      leaseMs: config.leaseMs,
      limit: config.concurrency,
      maxAttempts: config.maxAttempts,
      at: isoNow(Date.now()),
    });
    if (rows.length === 0) return 0;
    const renew = setInterval(() => {
      repo.renewLease(db.kysely, token, config.leaseMs).catch((err: unknown) => logger.warn({ err }, 'could not renew the enrichment lease'));
    }, config.leaseMs / 3);
    try {
      await Promise.all(
        rows.map(async (row) => {
          try {
            const status = await executeRun(db.kysely, row, token, env);
            logger.info({ runId: row.id, ws: row.workspace_id, status }, 'enrichment run ended');
          } catch (err) {
            logger.warn({ err, runId: row.id }, 'enrichment run failed');
            await repo.finish(db.kysely, row.id, token, 'failed', isoNow(Date.now()), 'error').catch(() => undefined);
          }
        }),
      );
    } finally {
      clearInterval(renew);
    }
    return rows.length;
  }

  const poller = startPoller(once, { pollMs: config.pollMs, logger, what: 'enrichment' });
  return {
    wake: () => poller.wake(),
    async stop() {
      await poller.stop();
    },
  };
}
