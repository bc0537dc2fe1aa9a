// The whole CPU of ENRICHMENT=on-create per create (docs/performance.md §Agents): account creates
// through the app in process with the runner running, each with a website so that on-create gets
// a run (a private address: the run fails at once), then the wait until the runner has done all
// there is; the process's CPU per create against ENRICHMENT=manual (its runner idle), alternated
// in rounds. What the create costs and what the runner costs for it, together, measured by
// process.cpuUsage: less swayed by a loaded machine than a rate.
//   node bench/on-create-total.ts [--dialect sqlite|postgres] [--rounds 5] [--creates 300]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/types.ts';
import { PROVIDERS } from '../src/enrichment/providers.ts';
import { startEnrichmentRunner } from '../src/jobs/enrichment.ts';
import { createLogger } from '../src/logger.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../test/helpers/app.ts';
import { median } from './run.ts';

const { values: args } = parseArgs({
  options: { dialect: { type: 'string', default: 'sqlite' }, rounds: { type: 'string', default: '5' }, creates: { type: 'string', default: '300' } },
});
const dialect = args.dialect as DialectName;
const creates = Number(args.creates);
const body = { fields: { $name: 'Bench account', $website: ['https://10.0.0.1'] } };

async function setup(mode: string) {
  const t = await buildTestApp(dialect, { env: { ENRICHMENT: mode, ENRICH_POLL_MS: '100' } });
  const s = await seedWorkspace(t);
  const runner = startEnrichmentRunner({
    db: t.deps.db,
    logger: createLogger('silent'),
    config: t.config.enrichment,
    execute: { providers: PROVIDERS, userAgent: 'bench' },
  });
  return { t, secret: s.secret, runner };
}

/** Whether no run is in flight and, where the runners read the change log, they have read all of it. */
async function idle(t: TestApp): Promise<boolean> {
  const db = t.deps.db.kysely;
  const n = await sql<{ n: number | string }>`select count(*) as n from enrichment_runs where status in ('queued', 'running')`.execute(db);
  if (Number(n.rows[0]!.n) > 0) return false;
  try {
    const r = await sql<{ behind: number | string | null }>`select (select max(seq) from events) - (select seq from enrichment_cursor) as behind`.execute(db);
    return Number(r.rows[0]?.behind ?? 0) <= 0;
  } catch {
    return true;
  }
}

async function round(a: { t: TestApp; secret: string }): Promise<number> {
  const c0 = process.cpuUsage();
  for (let done = 0; done < creates; done += 20) await Promise.all(Array.from({ length: 20 }, () => call(a.t, a.secret, 'POST', '/v1/accounts', body)));
  for (let i = 0; i < 1200 && !(await idle(a.t)); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / creates;
}

const manual = await setup('manual');
const eager = await setup('on-create');
try {
  await round(manual);
  await round(eager);
  const m: number[] = [];
  const e: number[] = [];
  for (let i = 0; i < Number(args.rounds); i++) {
    if (i % 2 === 0) {
      m.push(await round(manual));
      e.push(await round(eager));
    } else {
      e.push(await round(eager));
      m.push(await round(manual));
    }
  }
  const ratios = e.map((x, i) => x / m[i]!);
  console.log(
    `account creates [${dialect}], on-create against manual, runner on, until it is idle: CPU per create ${Math.round(median(e))} against ${Math.round(median(m))} µs, ratio ${median(ratios).toFixed(3)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
  );
} finally {
  await manual.runner.stop();
  await eager.runner.stop();
  await manual.t.close();
  await eager.t.close();
}
