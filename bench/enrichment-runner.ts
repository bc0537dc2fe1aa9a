// The enrichment runner's CPU per run while it drains a backlog (docs/performance.md §Enrichment on
// create): N accounts created through the app in process with ENRICHMENT=on-create, each with a
// private website so that its run fails at once, then a runner started and timed until no run is
// in flight. The creates run before the runner starts: what is measured is the runner alone.
//   node bench/enrichment-runner.ts [--dialect sqlite|postgres] [--runs 1500] [--concurrency 4]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { PROVIDERS } from '../src/enrichment/providers.ts';
import { startEnrichmentRunner } from '../src/jobs/enrichment.ts';
import { createLogger } from '../src/logger.ts';
import type { DialectName } from '../src/db/types.ts';
import { buildTestApp, call, seedWorkspace } from '../test/helpers/app.ts';

const { values: args } = parseArgs({
  options: { dialect: { type: 'string', default: 'sqlite' }, runs: { type: 'string', default: '1500' }, concurrency: { type: 'string', default: '4' } },
});
const runs = Number(args.runs);
const t = await buildTestApp(args.dialect as DialectName, {
  env: { ENRICHMENT: 'on-create', ENRICH_POLL_MS: '100', ENRICH_CONCURRENCY: String(args.concurrency) },
});
try {
  const s = await seedWorkspace(t);
  const body = { fields: { $name: 'Bench account', $website: ['https://10.0.0.1'] } };
  for (let i = 0; i < runs; i += 50) await Promise.all(Array.from({ length: Math.min(50, runs - i) }, () => call(t, s.secret, 'POST', '/v1/accounts', body)));
  const db = t.deps.db;
  const inFlight = async () =>
    Number(
      (
        await db.kysely
          .selectFrom('enrichment_runs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          // The condition as text, as the runner's own statements write it, reads the partial index
          // of the runs in flight (src/enrichment/repository.ts); bound values scanned every run.
          .where(sql<boolean>`status in ('queued', 'running')`)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const runner = startEnrichmentRunner({
    db,
    logger: createLogger('warn'),
    config: t.config.enrichment,
    execute: { providers: PROVIDERS, userAgent: 'bench' },
  });
  // The creates queue nothing: the runner records their runs from the change log first
  // (docs/enrichment.md §Runs), so the backlog is drained once every run is recorded and none is in flight.
  const recorded = async () =>
    Number(
      (
        await db.kysely
          .selectFrom('enrichment_runs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  while ((await recorded()) < runs || (await inFlight()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  await runner.stop();
  console.log(
    `enrichment runner [${args.dialect}], ${runs} runs, ENRICH_CONCURRENCY=${args.concurrency}: CPU ${Math.round((cpu.user + cpu.system) / runs)} µs per run, ${Math.round((wall * 1000) / runs)} µs of wall time per run`,
  );
} finally {
  await t.close();
}
