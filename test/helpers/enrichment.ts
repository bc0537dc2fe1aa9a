// ENRICHMENT=on-create in tests: the runs of the records created so far, recorded from the change
// log as a runner's round does (src/enrichment/creation.ts), without claiming any.
import { setTimeout as sleep } from 'node:timers/promises';
import { logEnd } from '../../src/db/index.ts';
import { lastEventSeq } from '../../src/changes/repository.ts';
import { recordCreationRuns } from '../../src/enrichment/creation.ts';
import type { EnrichmentConfig } from '../../src/config.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { type EnrichmentRunner, startEnrichmentRunner } from '../../src/jobs/enrichment.ts';
import { createLogger } from '../../src/logger.ts';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import { cursorSeq } from '../../src/enrichment/repository.ts';
import { call, seedWorkspace, type TestApp } from './app.ts';

/**
 * Reads the change log to its end. On PostgreSQL its end settles once the transactions writing this
 * database's log end (src/db/log-end.ts): the wait allows for other tests meanwhile.
 */
export async function readCreationLog(t: TestApp, providers: readonly EnrichmentProvider[] = PROVIDERS): Promise<void> {
  const end = logEnd();
  const db = t.deps.db.kysely;
  for (let i = 0; i < 3000; i++) {
    if ((await recordCreationRuns(db, { mode: 'on-create', providers }, end)).read === 0 && (await cursorSeq(db)) === (await lastEventSeq(db))) return;
    await sleep(10);
  }
  throw new Error('the change log was not read to its end');
}

/** Queues `n` runs in a new workspace (on-create, the log read): accounts whose website is a private address. Its id. */
export async function queueRuns(t: TestApp, n: number): Promise<string> {
  const s = await seedWorkspace(t);
  for (let i = 0; i < n; i++) await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `A${i}`, $website: ['https://10.0.0.1'] } });
  await readCreationLog(t);
  return s.workspaceId;
}

/** A runner of the test app's database with `providers`, silent; `config` overrides the app's enrichment settings. */
export function startTestRunner(
  t: TestApp,
  providers: readonly EnrichmentProvider[],
  opts: { config?: Partial<EnrichmentConfig>; busy?: () => boolean; userAgent?: string } = {},
): EnrichmentRunner {
  return startEnrichmentRunner({
    db: t.deps.db,
    logger: createLogger('silent'),
    config: { ...t.config.enrichment, ...opts.config },
    execute: { providers, userAgent: opts.userAgent ?? 'test' },
    ...(opts.busy ? { busy: opts.busy } : {}),
  });
}

/** The run `runId` once it has ended (neither queued nor running), as the API answers it. */
export async function settled(t: TestApp, secret: string, runId: string): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const run = (await call(t, secret, 'GET', `/v1/enrichmentRun/${runId}`)).json();
    if (!['queued', 'running'].includes(run.status)) return run;
    await sleep(25);
  }
  throw new Error('the run did not end');
}
