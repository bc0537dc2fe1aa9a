// Task pages at any offset, with and without filters (`node bench/pages.ts --type tasks`; docs/pages.md,
// docs/filtering.md): `--tasks` tasks (default 1,000,000) seeded in bulk with their value index
// (bench/filter-seed.ts), then GET /v1/tasks against a server process, one request at a time over
// keep-alive, a page of 25 with its exact totalCount checked, at 0, 25%, 50%, 75% and the last page
// of: every task; `$status[equal]=TODO` (a quarter); `$status[-equal]=TODO` (three quarters, the
// negated-only plan); and a `$dueAt` range of 10,000 minutes (10,000 tasks spread over the
// listing). Each figure is the median of its requests, next to the bare Fastify baseline measured
// right before it with the same client, their ratio and the 1-minute load average.
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import type { DialectName } from '../src/db/types.ts';
import { loadDefinitions } from '../src/definitions/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';
import { seedFilterTasks, taskDueAt } from './filter-seed.ts';
import { latency, MAIN, startBaseline, startServer, stop } from './run.ts';

export async function taskPages(dialect: DialectName, n: number, requests: number): Promise<void> {
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const children: Awaited<ReturnType<typeof startBaseline>>['child'][] = [];
  try {
    const ws = (await createWorkspace(systemCtx(db), { name: 'Bench task pages' })).id;
    const ctx = operatorCtx(db, ws);
    const key = await createKey(ctx, { userId: null, scopes: null, expiresInMs: null });
    const defs = (await loadDefinitions(ctx, { objectType: 'task' }))!;
    const t0 = performance.now();
    await seedFilterTasks(db, dialect, ws, defs, n);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.log(`${dialect}: seeded ${n.toLocaleString('en')} tasks in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

    const server = await startServer(tdb, 1, {}, MAIN, 180_000);
    children.push(server.child);
    const baseline = await startBaseline();
    children.push(baseline.child);
    const auth = { authorization: `Bearer ${key.secret}`, 'service-version': '2026-03-01' };
    const cases: [string, Record<string, string>, number][] = [
      ['no filter', {}, n],
      ['$status=TODO', { '$status[equal]': 'TODO' }, n / 4],
      ['$status[-equal]=TODO', { '$status[-equal]': 'TODO' }, (n * 3) / 4],
      ['$dueAt range', { '$dueAt[greaterThanOrEqual]': taskDueAt(0), '$dueAt[lessThan]': taskDueAt(10_000) }, Math.min(n, 10_000)],
    ];
    for (const [what, filter, total] of cases)
      for (const [label, offset] of [
        ['first', 0],
        ['25%', Math.floor(total / 4)],
        ['50%', Math.floor(total / 2)],
        ['75%', Math.floor((total * 3) / 4)],
        ['last', total - 25],
      ] as const) {
        const base = await latency(baseline.url, {}, requests);
        const url = `${server.url}/v1/tasks?${new URLSearchParams({ ...filter, limit: '25', offset: String(offset) }).toString()}`;
        const cells = [dialect.padEnd(8), what.padEnd(20), total.toLocaleString('en').padStart(9), `${offset.toLocaleString('en')} (${label})`.padEnd(18)];
        // A page that fails (a statement past its timeout answers 500) is reported, and the rest still measured.
        const page = await latency(url, auth, requests, (body) => {
          if (body.totalCount !== total || body.data.length !== 25) throw new Error(`${url}: totalCount ${body.totalCount}, ${body.data.length} items`);
        }).catch((e: Error) => e);
        if (page instanceof Error) {
          console.log(`${cells.join('  ')}  failed: ${page.message.slice(0, 300)}`);
          continue;
        }
        console.log(
          `${cells.join('  ')}  median ${page.median.toFixed(2).padStart(7)} ms  p95 ${page.p95.toFixed(2).padStart(7)} ms  baseline ${base.median.toFixed(2)} ms  ×${(page.median / base.median).toFixed(1)}  load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}
