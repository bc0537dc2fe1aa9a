// What ENRICHMENT=on-create adds to the create itself (docs/performance.md §Enrichment on create),
// without the runner: account creates through the app in process, ENRICHMENT=manual against
// on-create, alternated in rounds, each create with a website so that on-create plans a run (the
// runners record it from the change log: the create should cost what it costs under manual). Per create: the process's CPU, and the pages the commit writes to the WAL (SQLite; every
// page a transaction changes is one more WAL frame, and the WAL's checkpoints copy them again).
//   node bench/on-create-cost.ts [--dialect sqlite|postgres] [--rounds 7] [--creates 200]
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/types.ts';
import { buildTestApp, call, seedWorkspace, type TestApp } from '../test/helpers/app.ts';
import { median } from './run.ts';

const { values: args } = parseArgs({
  options: { dialect: { type: 'string', default: 'sqlite' }, rounds: { type: 'string', default: '7' }, creates: { type: 'string', default: '200' } },
});
const dialect = args.dialect as DialectName;
const creates = Number(args.creates);
const body = { fields: { $name: 'Bench account', $website: ['https://10.0.0.1'] } };

async function setup(mode: string): Promise<{ t: TestApp; secret: string }> {
  const t = await buildTestApp(dialect, { env: { ENRICHMENT: mode } });
  const s = await seedWorkspace(t);
  for (let i = 0; i < 100; i++) await call(t, s.secret, 'POST', '/v1/accounts', body);
  // No checkpoint while a round runs: the WAL only grows, one frame of a page and its header per page written.
  if (dialect === 'sqlite') await sql`pragma wal_autocheckpoint = 0`.execute(t.deps.db.kysely);
  return { t, secret: s.secret };
}

const FRAME = 4096 + 24;
const walSize = (a: { t: TestApp }) => statSync(join(a.t.tdb.dataDir, 'rolodex.db-wal'), { throwIfNoEntry: false })?.size ?? 0;

/** CPU µs and WAL frames per create over `creates` creates, 20 at a time. */
async function round(a: { t: TestApp; secret: string }): Promise<{ cpu: number; frames: number }> {
  const db = a.t.deps.db.kysely;
  if (dialect === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
  const wal0 = walSize(a);
  const c0 = process.cpuUsage();
  for (let done = 0; done < creates; done += 20) await Promise.all(Array.from({ length: 20 }, () => call(a.t, a.secret, 'POST', '/v1/accounts', body)));
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / creates, frames: (walSize(a) - wal0) / FRAME / creates };
}

const manual = await setup('manual');
const eager = await setup('on-create');
try {
  // A round of each first, not counted: the first round of either ran slower (the code's first calls).
  await round(manual);
  await round(eager);
  const rounds: { m: { cpu: number; frames: number }; e: { cpu: number; frames: number } }[] = [];
  for (let i = 0; i < Number(args.rounds); i++) {
    if (i % 2 === 0) {
      const m = await round(manual);
      rounds.push({ m, e: await round(eager) });
    } else {
      const e = await round(eager);
      rounds.push({ m: await round(manual), e });
    }
  }
  const ratios = rounds.map((r) => r.e.cpu / r.m.cpu);
  console.log(
    `account creates [${dialect}], on-create against manual, runner off: CPU per create ${Math.round(median(rounds.map((r) => r.e.cpu)))} against ${Math.round(median(rounds.map((r) => r.m.cpu)))} µs, ratio ${median(ratios).toFixed(3)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')})` +
      (dialect === 'sqlite'
        ? `; WAL frames per create ${median(rounds.map((r) => r.e.frames)).toFixed(1)} against ${median(rounds.map((r) => r.m.frames)).toFixed(1)}`
        : ''),
  );
} finally {
  await manual.t.close();
  await eager.t.close();
}
