// Filtered record listings (docs/filtering.md) and the plain listing (docs/pages.md) on N contacts
// (default 100,000), both databases, through HTTP against a server process: GET /v1/contacts, a
// page of 25 with its exact totalCount, one request at a time over keep-alive. Each figure is the
// median of its requests with p10–p90 as noise, next to the median of the bare Fastify baseline
// (bench/baseline.ts) measured right before it with the same client:
//   an equality on a TEXT field matching 100; startsWith on $name matching N/100; contains on
//   $email matching 1,000; a range on a NUMBER field matching 10,000 (N/2 below 20,000); and the
//   unfiltered listing at offsets 0, N/2 and N − 25.
//   node bench/filters.ts [--dialect sqlite|postgres|both] [--size 100000] [--rounds 100] [--explain] [--keep DIR]
// --keep DIR keeps the seeded database (a SQLite file or a PostgreSQL schema) and notes where in
// DIR; a later run with the same DIR, dialect and size migrates it and measures it again without
// seeding (1,000,000 contacts take many minutes to seed). Drop it by hand when done.
// --explain prints the plan of every statement the module runs for each filter (EXPLAIN QUERY
// PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL); PROFILE=1 times those statements in process.
// Seeding (bench/filter-seed.ts) writes rows in bulk with the value and trigram indexes dropped,
// then builds them again from their own stored definitions, so the tables end as the migrations made them.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { createKey } from '../src/auth/service.ts';
import { openDb } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import type { DialectName, Executor } from '../src/db/types.ts';
import { addField, loadDefinitions } from '../src/definitions/service.ts';
import { parseFilters, planFilters, walkRows } from '../src/records/filter/service.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb, type TestDb, withSearchPath } from '../test/helpers/db.ts';
import { TEST_DATABASE_URL } from '../test/helpers/services.ts';
import { seedFilterContacts } from './filter-seed.ts';
import { latency, MAIN, median, startBaseline, startServer, stop } from './run.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    size: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '100' },
    explain: { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
});
const N = Number(args.size);
const ROUNDS = Number(args.rounds);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;

async function explain(db: Executor, dialect: DialectName, what: string, q: RawBuilder<unknown>): Promise<void> {
  const c = q.compile(db);
  const prefix = dialect === 'postgres' ? 'explain (analyze, costs off, timing off, summary off) ' : 'explain query plan ';
  const r = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + c.sql, [...c.parameters]));
  const lines = r.rows.map((x) => (dialect === 'postgres' ? String(x['QUERY PLAN']) : `${String(x.detail)}`));
  console.log(`    ${what}:\n      ${lines.join('\n      ')}`);
}

interface Kept {
  dataDir: string;
  schema?: string;
  ws: string;
  secret: string;
}

/** A seeded database: the one kept in --keep's DIR for this dialect and size, or a new one. */
async function seeded(dialect: DialectName): Promise<{ tdb: TestDb; ws: string; secret: string }> {
  const note = args.keep === undefined ? null : join(args.keep, `${dialect}-${N}.json`);
  if (note !== null && existsSync(note)) {
    const k = JSON.parse(readFileSync(note, 'utf8')) as Kept;
    const url = k.schema === undefined ? undefined : withSearchPath(TEST_DATABASE_URL, k.schema);
    const db = k.schema === undefined ? openDb({ dataDir: k.dataDir }) : openDb({ dataDir: k.dataDir, databaseUrl: TEST_DATABASE_URL, schema: k.schema });
    await migrate(db);
    await sql`analyze`.execute(db.kysely);
    console.log(`[${dialect}] reusing ${N} contacts kept in ${k.schema ?? k.dataDir}`);
    const tdb: TestDb = { db, dataDir: k.dataDir, drop: () => db.close(), ...(url ? { databaseUrl: url } : {}) };
    return { tdb, ws: k.ws, secret: k.secret };
  }
  const tdb = await createTestDb(dialect);
  const db = tdb.db.kysely;
  const ws = (await createWorkspace(systemCtx(db), { name: 'bench' })).id;
  const ctx = operatorCtx(db, ws);
  await addField(ctx, { objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT' });
  await addField(ctx, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
  const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;
  const key = await createKey(ctx, { userId: null, scopes: null, expiresInMs: null });
  const t0 = performance.now();
  await seedFilterContacts(db, dialect, ws, defs, N);
  await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
  console.log(`[${dialect}] seeded ${N} contacts in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  if (note === null) return { tdb, ws, secret: key.secret };
  mkdirSync(args.keep!, { recursive: true });
  const kept: Kept = { dataDir: tdb.dataDir, ws, secret: key.secret, ...(tdb.schema ? { schema: tdb.schema } : {}) };
  writeFileSync(note, JSON.stringify(kept));
  return { tdb: { ...tdb, drop: () => tdb.db.close() }, ws, secret: key.secret };
}

async function run(dialect: DialectName): Promise<void> {
  const { tdb, ws, secret } = await seeded(dialect);
  const children: ChildProcess[] = [];
  try {
    const db = tdb.db.kysely;
    const ctx = operatorCtx(db, ws);
    const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;

    // Opening 1,000,000 contacts migrates and refreshes statistics first: allow it minutes.
    const server = await startServer(tdb, 1, {}, MAIN, 180_000);
    children.push(server.child);
    const baseline = await startBaseline();
    children.push(baseline.child);
    const auth = { authorization: `Bearer ${secret}`, 'service-version': '2026-03-01' };

    const report = async (label: string, query: Record<string, string>, want: number, goal: number) => {
      const base = (await latency(baseline.url, {}, ROUNDS)).median;
      const url = `${server.url}/v1/contacts?${new URLSearchParams({ limit: '25', ...query }).toString()}`;
      const { times } = await latency(url, auth, ROUNDS, (body) => {
        if (body.totalCount !== want || body.data.length !== Math.min(25, want))
          throw new Error(`${label}: totalCount ${body.totalCount}, ${body.data.length} items`);
      });
      const m = median(times);
      console.log(
        `[${dialect}] ${label.padEnd(36)} median ${m.toFixed(2).padStart(6)} ms  p10–p90 ${pct(times, 0.1).toFixed(2)}–${pct(times, 0.9).toFixed(2)} ms  goal ≤ ${goal} ms ${m <= goal ? 'met' : 'MISSED'}  (baseline ${base.toFixed(2)} ms)`,
      );
    };
    for (const offset of [0, N / 2, N - 25]) await report(`listing, offset ${offset}`, { offset: String(offset) }, N, 10);

    const inRange = Math.min(10_000, N / 2);
    const cases: [string, Record<string, string>, number, number][] = [
      ['equality, 100 matches', { 'code[equal]': 'code42' }, 100, 10],
      [`startsWith $name, ${N / 100} matches`, { '$name[startsWith]': 'given42 ' }, N / 100, 20],
      ['contains $email, 1,000 matches', { '$email[contains]': `@company${Math.floor(N / 1000) - 3}.` }, 1000, 50],
      [`range on NUMBER, ${inRange} matches`, { 'score[greaterThan]': '-0.5', 'score[lessThan]': String(inRange) }, inRange, 50],
    ];
    for (const [label, query, want, goal] of cases) {
      await report(label, query, want, goal);
      const filters = parseFilters(query, defs);
      const page = { limit: 25, offset: 0 };
      const plan = await planFilters(ctx, { defs, filters, page });
      // The statements filteredPage runs for this page: with an index count, the walk when it is chosen.
      const statements: [string, RawBuilder<unknown>][] = [];
      if (plan.kind === 'negated') statements.push(['page', plan.page]);
      else if (plan.indexCount) {
        statements.push(['count (index range)', plan.indexCount]);
        const rows = walkRows(page, want, N);
        statements.push(rows === null ? ['page (sorted)', plan.sorted] : [`page (walk of ${rows} records)`, plan.walk(rows)]);
      } else statements.push(['page and count', plan.sorted]);
      if (process.env.PROFILE) {
        const tp = [];
        for (let i = 0; i < 20; i++) {
          const t = performance.now();
          await planFilters(ctx, { defs, filters, page });
          tp.push(performance.now() - t);
        }
        const parts = [`plan ${median(tp).toFixed(2)} ms`];
        for (const [what, q] of statements) {
          const ts = [];
          for (let i = 0; i < 20; i++) {
            const t = performance.now();
            await q.execute(db);
            ts.push(performance.now() - t);
          }
          parts.push(`${what} ${median(ts).toFixed(2)} ms`);
        }
        console.log(`    in process: ${parts.join(', ')}`);
      }
      if (args.explain) for (const [what, q] of statements) await explain(db, dialect, what, q);
    }
  } finally {
    for (const c of children) await stop(c);
    await tdb.drop();
  }
}

console.log(`${ROUNDS} requests per figure, one at a time over keep-alive`);
for (const d of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await run(d);
