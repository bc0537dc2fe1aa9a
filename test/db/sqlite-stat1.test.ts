// The statistics of an index described from reads (src/db/sqlite/stat1.ts, docs/design.md
// §Database statistics) are the row SQLite's own `ANALYZE index` writes under the same
// analysis_limit, for any table: values repeated or not, runs longer than the sample, NULLs,
// unique indexes (of columns that may or may not be null) and partial ones, WITHOUT ROWID primary
// keys. Compared with the SQLite Node.js bundles, so a version that computes its rows otherwise
// fails here. SQLite only: PostgreSQL keeps its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { sampledStat } from '../../src/db/sqlite/stat1.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';

let tdb: TestDb;
before(async () => {
  tdb = await createTestDb('sqlite');
});
after(async () => {
  await tdb.drop();
});

const value = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 400 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 'x', 'y') },
);
// A run of equal rows, so that some values repeat past the sample and some columns are uneven.
const run = fc.record({ a: value, b: value, c: value, times: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 1500 })) });

const shape = fc.record({
  runs: fc.array(run, { maxLength: 40 }),
  columns: fc.constantFrom(['a'], ['a', 'b'], ['b', 'a', 'c'], ['c', 'b']),
  kind: fc.constantFrom('plain', 'unique', 'unique not null', 'partial', 'without rowid'),
  limit: fc.constantFrom(1000, 50, 7),
});

let n = 0;
test('the row of every index is the one ANALYZE writes', async () => {
  const db = tdb.db.kysely;
  await fc.assert(
    fc.asyncProperty(shape, async ({ runs, columns, kind, limit }) => {
      const t = `t${n++}`;
      const cols = columns.join(', ');
      const body =
        kind === 'without rowid'
          ? `a, b, c, primary key (${cols})) without rowid`
          : kind === 'unique not null'
            ? 'a not null, b not null, c not null)'
            : 'a, b, c)';
      await sql.raw(`create table ${t} (${body}`).execute(db);
      let rows = runs.flatMap((r) => Array.from({ length: r.times }, () => [r.a, r.b, r.c]));
      if (kind === 'without rowid' || kind === 'unique not null') rows = rows.map((r) => r.map((v) => v ?? 0));
      if (kind !== 'plain' && kind !== 'partial') {
        const seen = new Set<string>();
        rows = rows.filter((r) => {
          const key = JSON.stringify(columns.map((c) => r['abc'.indexOf(c)]));
          return !seen.has(key) && seen.add(key);
        });
      }
      for (let i = 0; i < rows.length; i += 500) {
        const part = rows.slice(i, i + 500).map((r) => sql`(${r[0]}, ${r[1]}, ${r[2]})`);
        await sql`insert into ${sql.raw(t)} (a, b, c) values ${sql.join(part)}`.execute(db);
      }
      if (kind !== 'without rowid') {
        const where = kind === 'partial' ? ` where ${columns[0]} is not null` : '';
        await sql.raw(`create ${kind.startsWith('unique') ? 'unique ' : ''}index ${t}_i on ${t} (${cols})${where}`).execute(db);
      }
      const [index] = (await sql<{ name: string; origin: string; partial: number }>`select name, origin, partial from pragma_index_list(${t})`.execute(db))
        .rows;
      const ours = await sampledStat(db, t, index!, limit);
      await sql`pragma analysis_limit = ${sql.lit(limit)}`.execute(db);
      await sql`analyze ${sql.id(index!.name)}`.execute(db);
      const theirs = (await sql<{ idx: string; stat: string }>`select idx, stat from sqlite_stat1 where tbl = ${t}`.execute(db)).rows;
      await sql.raw(`drop table ${t}`).execute(db);
      assert.ok(ours);
      assert.deepEqual(
        ours.stat === null ? [] : [{ idx: ours.idx, stat: ours.stat }],
        theirs.map((r) => ({ ...r })),
      );
    }),
    { numRuns: 100 },
  );
});
