// Task pages at any offset, with and without filters (`node bench/pages.ts --type tasks`; docs/pages.md,
// docs/filtering.md): `--tasks` tasks (default 1,000,000) seeded in bulk with their value index and
// ranked values (bench/filter-seed.ts), then GET /v1/tasks against a server process, one request at
// a time over keep-alive, a page of 25 with its exact totalCount checked, at 0, 25%, 50%, 75% and
// the last page of its matches. `$status[equal]=TODO` (a quarter of the tasks, a ranked value,
// docs/filtering.md §Ranked values) is measured against the unfiltered page at the same share of
// the listing in paired rounds (`--rounds`, each round's order alternating), `--requests` requests
// each, and reported as the median of the rounds' ratios. `--task-filters all` adds
// `$status[-equal]=TODO` (the listing without a ranked value's set), paired the same way, and a
// filter no ranked set serves against the bare Fastify baseline: a `$dueAt` range of 10,000
// minutes (10,000 tasks spread over the listing). The statuses take turns, or with
// `--task-statuses bunched` the newest quarter of the tasks is TODO and the rest take turns.
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { loadDefinitions } from '../src/definitions/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { seedFilterTasks, taskDueAt } from './filter-seed.ts';
import { latency, MAIN, median, startBaseline, startServer, stop } from './run.ts';

type Case = [string, Record<string, string>, number];

const offsetsOf = (total: number) =>
  [
    ['first', 0],
    ['25%', Math.floor(total / 4)],
    ['50%', Math.floor(total / 2)],
    ['75%', Math.floor((total * 3) / 4)],
    ['last', total - 25],
  ] as const;

export async function taskPages(
  dialect: DialectName,
  n: number,
  requests: number,
  opts: { rounds?: number; all?: boolean; bunched?: boolean } = {},
): Promise<void> {
  const rounds = opts.rounds ?? 5;
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const children: Awaited<ReturnType<typeof startBaseline>>['child'][] = [];
  try {
    const ws = (await createWorkspace(systemCtx(db), { name: 'Bench task pages' })).id;
    const ctx = operatorCtx(db, ws);
    const key = await createKey(ctx, { userId: null, scopes: null, expiresInMs: null });
    const defs = (await loadDefinitions(ctx, { objectType: 'task' }))!;
    const t0 = performance.now();
    await seedFilterTasks(db, dialect, ws, defs, n, opts.bunched);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.log(`${dialect}: seeded ${n.toLocaleString('en')} tasks in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    const server = await startServer(tdb, 1, {}, MAIN, 180_000);
    children.push(server.child);
    const baseline = await startBaseline();
    children.push(baseline.child);
    const auth = { authorization: `Bearer ${key.secret}`, 'service-version': '2026-03-01' };
    const page = (filter: Record<string, string>, total: number, offset: number) => {
      const url = `${server.url}/v1/tasks?${new URLSearchParams({ ...filter, limit: '25', offset: String(offset) }).toString()}`;
      return latency(url, auth, requests, (body) => {
        if (body.totalCount !== total || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
        const statuses = (body.data as { fields: { $status: { value: string } } }[]).map((t) => t.fields.$status.value);
        if (filter['$status[equal]'] && statuses.some((v) => v !== filter['$status[equal]'])) throw new Error(`${url}: a task of another status`);
        if (filter['$status[-equal]'] && statuses.includes(filter['$status[-equal]'])) throw new Error(`${url}: a task of the excluded status`);
      });
    };

    // The ranked values against the unfiltered listing at the same share of it, paired.
    const rankedCases: Case[] = [['$status=TODO', { '$status[equal]': 'TODO' }, n / 4]];
    if (opts.all) rankedCases.push(['$status[-equal]=TODO', { '$status[-equal]': 'TODO' }, (n * 3) / 4]);
    const unfiltered = offsetsOf(n);
    for (const [what, filter, total] of rankedCases)
      for (const [i, [label, offset]] of offsetsOf(total).entries()) {
        const at = unfiltered[i]![1];
        const plain: number[] = [];
        const filtered: number[] = [];
        const ratios: number[] = [];
        for (let r = 0; r < rounds; r++) {
          const pair = r % 2 === 0 ? [() => page({}, n, at), () => page(filter, total, offset)] : [() => page(filter, total, offset), () => page({}, n, at)];
          const a = await pair[0]!();
          const b = await pair[1]!();
          const [p, f] = r % 2 === 0 ? [a, b] : [b, a];
          plain.push(p.median);
          filtered.push(f.median);
          ratios.push(f.median / p.median);
        }
        console.log(
          `${dialect.padEnd(8)}  ${what.padEnd(20)}  ${total.toLocaleString('en').padStart(9)}  ${`${offset.toLocaleString('en')} (${label})`.padEnd(18)}  filtered ${median(filtered).toFixed(2).padStart(6)} ms  unfiltered (offset ${at.toLocaleString('en')}) ${median(plain).toFixed(2).padStart(6)} ms  ×${median(ratios).toFixed(2)} (${rounds} rounds)  load ${loadavg()[0]!.toFixed(1)}`,
        );
      }

    if (!opts.all) return;
    const cases: Case[] = [['$dueAt range', { '$dueAt[greaterThanOrEqual]': taskDueAt(0), '$dueAt[lessThan]': taskDueAt(10_000) }, Math.min(n, 10_000)]];
    for (const [what, filter, total] of cases)
      for (const [label, offset] of offsetsOf(total)) {
        const base = await latency(baseline.url, {}, requests);
        const cells = [dialect.padEnd(8), what.padEnd(20), total.toLocaleString('en').padStart(9), `${offset.toLocaleString('en')} (${label})`.padEnd(18)];
        // A page that fails (a statement past its timeout answers 500) is reported, and the rest still measured.
        const got = await page(filter, total, offset).catch((e: Error) => e);
        if (got instanceof Error) {
          console.log(`${cells.join('  ')}  failed: ${got.message.slice(0, 300)}`);
          continue;
        }
        console.log(
          `${cells.join('  ')}  median ${got.median.toFixed(2).padStart(7)} ms  p95 ${got.p95.toFixed(2).padStart(7)} ms  baseline ${base.median.toFixed(2)} ms  ×${(got.median / base.median).toFixed(1)}  load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}
