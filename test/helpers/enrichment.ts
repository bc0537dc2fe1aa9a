// ENRICHMENT=on-create in tests: the runs of the records created so far, recorded from the change
// log as a runner's round does (src/enrichment/creation.ts), without claiming any.
import { setTimeout as sleep } from 'node:timers/promises';
import { logEnd } from '../../src/db/index.ts';
import { lastEventSeq } from '../../src/changes/repository.ts';
import { recordCreationRuns } from '../../src/enrichment/creation.ts';
import type { EnrichmentProvider } from '../../src/enrichment/provider.ts';
import { PROVIDERS } from '../../src/enrichment/providers.ts';
import { cursorSeq } from '../../src/enrichment/repository.ts';
import type { TestApp } from './app.ts';

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
