// The enrichment runner (docs/enrichment.md §Runs): every server process may run one. Each round
// claims due runs under a token of its own with a lease (src/enrichment/repository.ts), executes
// them outside any request, and writes each outcome only while it still holds the run; the lease
// is renewed while they execute. A run left `running` by a process that died comes due again when
// its lease ends and is retried, up to ENRICH_MAX_ATTEMPTS claims, then failed. While runs pile up,
// a claim takes more of them at once (fewer claims per run); they still execute ENRICH_CONCURRENCY
// at a time. Claims never overlap (SKIP LOCKED on PostgreSQL, one writer on SQLite), and a record
// has one run in flight. With ENRICHMENT=on-create a round first records the runs of the records
// created since the last (src/enrichment/creation.ts), and claims them in the same round. A round
// waits while the process's requests keep it busy, for at most ENRICH_MAX_DEFER_MS (docs/enrichment.md
// §Under load): the runs are work no caller waits for, and they take the CPU those requests need.
import { watchLoad } from './load.ts';
import { startPoller } from './poller.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { EnrichmentConfig } from '../config.ts';
import { type Db, logEnd } from '../db/index.ts';
import { CREATION_BATCH, recordCreationRuns } from '../enrichment/creation.ts';
import { type ExecuteEnv, executeRun } from '../enrichment/execute.ts';
import { claimRuns, finishRun, finishRuns } from '../enrichment/outcome.ts';
import * as repo from '../enrichment/repository.ts';
import type { Subject } from '../enrichment/provider.ts';
import { loadSubjects } from '../enrichment/service.ts';
import { isoNow } from '../lib/ids.ts';

/** A claim takes at most this many times ENRICH_CONCURRENCY runs (docs/enrichment.md §Runs). */
export const CLAIM_GROWTH = 8;

/** How often a deferred round looks at the load again, in ms (at most ENRICH_POLL_MS). */
export const DEFER_CHECK_MS = 100;

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
  /** Whether the process is busy with requests; by default its event loop's utilization (./load.ts). */
  busy?: () => boolean;
}): EnrichmentRunner {
  const { db, logger, config } = deps;
  const env: ExecuteEnv = { ...deps.execute, timeoutMs: config.timeoutMs, allowPrivate: config.allowPrivate };
  const instance = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  let round = 0;
  // How many runs the next claim takes: ENRICH_CONCURRENCY, doubled after every full claim (runs pile
  // up) to at most CLAIM_GROWTH times it, back to it after one that is not full.
  let take = config.concurrency;
  const creations = config.mode === 'on-create' ? { env: { mode: config.mode, providers: deps.execute.providers }, end: logEnd() } : null;

  // A round first records the runs of the records created since the last, claiming up to the
  // largest claim of them as it records them when no other run is due (src/enrichment/creation.ts);
  // it claims due runs when it claimed none that way. It goes again at once only when its claim
  // came back full or the log held more events than one step reads: a round that took all there
  // was sleeps a poll, so that creates that keep coming are recorded a poll's worth at a time, not
  // a few per round, each round's own statements over again.
  async function once(): Promise<number> {
    const token = `${instance}:${++round}`;
    const limit = config.concurrency * CLAIM_GROWTH;
    const fresh = creations ? await recordCreationRuns(db.kysely, creations.env, creations.end, { token, leaseMs: config.leaseMs, limit }) : null;
    const more = fresh?.read === CREATION_BATCH ? 1 : 0;
    if (fresh && fresh.claimed.length > 0) {
      const n = await execute(token, fresh.claimed, fresh.subjects);
      return more + (n === limit ? n : 0);
    }
    const size = take;
    const rows = await claimRuns(db.kysely, { token, leaseMs: config.leaseMs, limit: size, maxAttempts: config.maxAttempts, at: isoNow(Date.now()) });
    take = rows.length === size ? Math.min(size * 2, limit) : config.concurrency;
    if (rows.length === 0) return more;
    const n = await executeClaimed(token, rows);
    return more + (n === size ? n : 0);
  }

  /** Executes the due runs claimed under `token`, with their records read together; how many. */
  async function executeClaimed(token: string, rows: repo.RunRow[]): Promise<number> {
    // The records of the runs taken, read together rather than one run at a time; a run reads its
    // own when that read failed.
    const subjects = await loadSubjects(db.kysely, rows).catch((err: unknown) => {
      logger.warn({ err }, 'could not read the records of the enrichment runs claimed');
      return undefined;
    });
    return execute(token, rows, subjects);
  }

  /** Executes the runs claimed under `token`, renewing their lease meanwhile; how many. */
  async function execute(token: string, rows: repo.RunRow[], subjects: Map<string, Subject> | undefined): Promise<number> {
    const roundEnv = { ...env, finish: finisher(token) };
    const renew = setInterval(() => {
      repo.renewLease(db.kysely, token, config.leaseMs).catch((err: unknown) => logger.warn({ err }, 'could not renew the enrichment lease'));
    }, config.leaseMs / 3);
    const waiting = [...rows];
    const untried: string[] = [];
    const ending: Promise<void>[] = [];
    // ENRICH_CONCURRENCY runs at a time; a stopping runner gives back those it has not started. A
    // run's lane takes the next run once the run has reached its outcome: an outcome that writes
    // nothing to the record waits for the others reached in the same turn (finisher), the next
    // run need not.
    const lane = async () => {
      for (let row = waiting.shift(); row; row = waiting.shift()) {
        if (poller.stopping) {
          untried.push(row.id);
          continue;
        }
        const reached = Promise.withResolvers<void>();
        const runEnv: ExecuteEnv = {
          ...roundEnv,
          finish: (outcome) => {
            reached.resolve();
            return roundEnv.finish(outcome);
          },
        };
        const run = row;
        const done = executeRun(db.kysely, run, token, runEnv, subjects && (subjects.get(run.entity_id) ?? null)).then(
          (status) => void logger.info({ runId: run.id, ws: run.workspace_id, status }, 'enrichment run ended'),
          async (err: unknown) => {
            logger.warn({ err, runId: run.id }, 'enrichment run failed');
            await finishRun(db.kysely, token, { id: run.id, status: 'failed', error: 'error' }).catch(() => undefined);
          },
        );
        ending.push(done);
        await Promise.race([done, reached.promise]);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(config.concurrency, rows.length) }, lane));
      await Promise.all(ending);
      if (untried.length > 0) await repo.release(db.kysely, token, untried, isoNow(Date.now()));
    } finally {
      clearInterval(renew);
    }
    return rows.length;
  }

  /**
   * The outcomes of a round's runs that end without a write to their record (a failed lookup, a
   * timeout) and that come in one turn of the event loop are written together, in one statement
   * (and their events in one more per workspace, in the same transaction: src/enrichment/outcome.ts):
   * runs claimed together mostly end together, and on SQLite each statement is a write of its own.
   */
  function finisher(token: string): (outcome: repo.Outcome) => Promise<boolean> {
    let batch: { outcome: repo.Outcome; done: (held: boolean) => void; failed: (err: unknown) => void }[] = [];
    const flush = () => {
      const these = batch;
      batch = [];
      finishRuns(
        db.kysely,
        token,
        these.map((b) => b.outcome),
      ).then(
        (ended) => these.forEach((b) => b.done(ended.has(b.outcome.id))),
        (err: unknown) => these.forEach((b) => b.failed(err)),
      );
    };
    return (outcome) =>
      new Promise<boolean>((done, failed) => {
        if (batch.length === 0) setImmediate(flush);
        batch.push({ outcome, done, failed });
      });
  }

  // The load is watched only where a round may wait for it.
  const watch = deps.busy || config.maxDeferMs === 0 ? null : watchLoad();
  const busy = deps.busy ?? watch?.busy;
  const defer = busy && { busy, maxMs: config.maxDeferMs, checkMs: Math.min(config.pollMs, DEFER_CHECK_MS) };
  const poller = startPoller(once, { pollMs: config.pollMs, logger, what: 'enrichment', ...(defer ? { defer } : {}) });
  return {
    wake: () => poller.wake(),
    async stop() {
      await poller.stop();
      watch?.stop();
    },
  };
}
