// Filtered record listings (docs/filtering.md) on N contacts (default 100,000), both databases,
// through the filters module (filteredPage: first page with an exact totalCount), each figure the
// median of its rounds with p10–p90 as noise, next to the median of `select 1` on the same
// connection as a baseline:
//   an equality on a TEXT field matching 100; startsWith on $name matching N/100; contains on
//   $email matching 1,000; a range on a NUMBER field matching 10,000.
//   node bench/filters.ts [--dialect sqlite|postgres|both] [--size 100000] [--rounds 40] [--explain]
import { parseArgs } from 'node:util';
import { CompiledQuery, sql } from 'kysely';
import { RECORDS } from '../src/records/repository.ts';
import { rankRebuildAll } from '../src/db/rank.ts';
import type { DialectName, Executor } from '../src/db/types.ts';
import { addField, loadDefinitions, type TypeDefinitions } from '../src/definitions/service.ts';
import { filteredPage, parseFilters, planFilters } from '../src/filters/service.ts';
import { trigramRows } from '../src/filters/repository.ts';
import { operatorCtx, systemCtx } from '../src/lib/context.ts';
import { valueRows } from '../src/records/index-values.ts';
import { createWorkspace } from '../src/workspaces/service.ts';
import { createTestDb } from '../test/helpers/db.ts';

const { values: args } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    size: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '40' },
    explain: { type: 'boolean', default: false },
  },
});
const N = Number(args.size);
const ROUNDS = Number(args.rounds);
const T0 = Date.UTC(2026, 0, 1);
const FIRST = Array.from({ length: 100 }, (_, i) => `Given${String(i).padStart(2, '0')}`);

async function seed(db: Executor, ws: string, defs: TypeDefinitions): Promise<void> {
  const fields = new Set(['$email']);
  for (let i = 0; i < N; i += 5000) {
    await db.transaction().execute(async (tx) => {
      const records = [];
      const values = [];
      for (let j = i; j < Math.min(N, i + 5000); j++) {
        const id = `con_${String(j).padStart(8, '0')}`;
        const at = new Date(T0 + j * 1000).toISOString();
        const v = {
          $name: { firstName: FIRST[j % 100], lastName: `Family${j}` },
          $email: [`person${j}@company${j % (N / 1000)}.example`],
          code: `code${j % (N / 100)}`,
          // A permutation of 0..N-1: any interval of 10,000 holds 10,000 contacts.
          score: (j * 7919) % N,
        };
        records.push({ id, workspace_id: ws, kind: 'contact' as const, external_id: null, fields: JSON.stringify(v), created_at: at, updated_at: at });
        values.push(...valueRows(ws, defs, id, v));
      }
      for (let k = 0; k < records.length; k += 500)
        await tx
          .insertInto('records')
          .values(records.slice(k, k + 500))
          .execute();
      for (let k = 0; k < values.length; k += 800)
        await tx
          .insertInto('record_values')
          .values(values.slice(k, k + 800))
          .execute();
      const grams = trigramRows(values, fields);
      for (let k = 0; k < grams.length; k += 1000)
        await tx
          .insertInto('record_trigrams')
          .values(grams.slice(k, k + 1000))
          .execute();
    });
  }
  await rankRebuildAll(db, RECORDS);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

async function run(dialect: DialectName): Promise<void> {
  const tdb = await createTestDb(dialect);
  try {
    const db = tdb.db.kysely;
    const ws = (await createWorkspace(systemCtx(db), { name: 'bench' })).id;
    const ctx = operatorCtx(db, ws);
    await addField(ctx, { objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT' });
    await addField(ctx, { objectType: 'contact', key: 'score', label: 'Score', valueType: 'NUMBER' });
    const defs = (await loadDefinitions(ctx, { objectType: 'contact' }))!;
    const t0 = performance.now();
    await seed(db, ws, defs);
    await sql.raw(dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    console.log(`[${dialect}] seeded ${N} contacts in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const base = median(await time(() => sql`select 1`.execute(db)));
    const cases: [string, Record<string, string>, number, number][] = [
      ['equality, 100 matches', { 'code[equal]': 'code42' }, 100, 10],
      [`startsWith $name, ${N / 100} matches`, { '$name[startsWith]': 'given42 ' }, N / 100, 20],
      ['contains $email, 1,000 matches', { '$email[contains]': `@company${Math.floor(N / 1000) - 3}.` }, 1000, 50],
      ['range on NUMBER, 10,000 matches', { 'score[greaterThan]': '-0.5', 'score[lessThan]': String(Math.min(10_000, N / 2)) }, Math.min(10_000, N / 2), 50],
    ];
    for (const [label, query, want, goal] of cases) {
      const filters = parseFilters(query, defs);
      const page = { limit: 25, offset: 0 };
      const got = await filteredPage(ctx, { defs, filters, page });
      if (got.totalCount !== want || got.ids.length !== 25) throw new Error(`${label}: totalCount ${got.totalCount}, ${got.ids.length} ids`);
      const times = await time(() => filteredPage(ctx, { defs, filters, page }));
      const m = median(times);
      console.log(
        `[${dialect}] ${label.padEnd(34)} median ${m.toFixed(2).padStart(6)} ms  p10–p90 ${pct(times, 0.1).toFixed(2)}–${pct(times, 0.9).toFixed(2)} ms  goal ≤ ${goal} ms ${m <= goal ? 'met' : 'MISSED'}  (select 1: ${base.toFixed(3)} ms)`,
      );
      if (process.env.PROFILE) {
        const plan = await planFilters(ctx, { defs, filters, page });
        const tp = median(await time(() => planFilters(ctx, { defs, filters, page })));
        const ta = median(await time(() => plan.page.execute(db)));
        const tc = plan.count ? median(await time(() => plan.count!.execute(db))) : 0;
        console.log(`    plan ${tp.toFixed(2)} ms, page ${ta.toFixed(2)} ms, count ${tc.toFixed(2)} ms`);
      }
      if (args.explain) {
        const plan = await planFilters(ctx, { defs, filters, page });
        for (const [what, q] of [
          ['page', plan.page],
          ['count', plan.count],
        ] as const) {
          if (!q) continue;
          const c = q.compile(db);
          const prefix = dialect === 'postgres' ? 'explain (analyze, costs off, timing off, summary off) ' : 'explain query plan ';
          const r = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + c.sql, [...c.parameters]));
          const lines = r.rows.map((x) => (dialect === 'postgres' ? String(x['QUERY PLAN']) : `${String(x.detail)}`));
          console.log(`    ${what}:\n      ${lines.join('\n      ')}`);
        }
      }
    }
  } finally {
    await tdb.drop();
  }
}

for (const d of args.dialect === 'both' ? (['sqlite', 'postgres'] as const) : [args.dialect as DialectName]) await run(d);
