// Multi-row inserts (src/db/insert-rows.ts): whatever the rows share, every row is written with
// its own values in the right columns, on both databases. On SQLite, columns that hold one value
// in every row of a statement are bound once; the statements below mix shared and own columns in
// every position, and a call whose chunks share different columns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { insertRows } from '../../src/db/insert-rows.ts';
import type { RecordValuesTable } from '../../src/records/tables.ts';
import { eachDialect } from '../helpers/app.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

type Row = RecordValuesTable;
const row = (i: number, over: Partial<Row> = {}): Row => ({
  workspace_id: 'ir_a',
  object_type: 'contact',
  field: `f${i % 3}`,
  value_text: i % 4 === 0 ? null : `text ${i}`,
  value_num: i % 4 === 0 ? i : null,
  record_id: `rec_${String(i).padStart(3, '0')}`,
  ...over,
});

const CASES: Record<string, Row[]> = {
  'nothing shared': Array.from({ length: 5 }, (_, i) => row(i, { workspace_id: `ir_${i}`, object_type: `type${i}` })),
  'shared first columns': Array.from({ length: 7 }, (_, i) => row(i)),
  'shared in the middle and at the end': Array.from({ length: 6 }, (_, i) => row(i, { workspace_id: `ir_${i}`, field: 'same', record_id: 'rec_same' })),
  'a shared null': Array.from({ length: 4 }, (_, i) => row(i, { value_num: null, value_text: `t${i}` })),
  'every column shared (duplicates)': Array.from({ length: 3 }, () => row(1)),
  'one row': [row(9)],
  // Chunks of 4: the first shares its workspace, the second does not, the last is one row.
  'chunks that share different columns': Array.from({ length: 9 }, (_, i) => row(i, { workspace_id: i < 4 ? 'ir_a' : `ir_${i}` })),
};

const COLUMNS = ['workspace_id', 'object_type', 'field', 'value_text', 'value_num', 'record_id'] as const;

eachDialect('multi-row inserts', (ctx) => {
  for (const [name, rows] of Object.entries(CASES)) {
    test(`${name}: every row as given`, async () => {
      const db = ctx().deps.db.kysely;
      await write(db, async (tx) => {
        await sql`delete from record_values where workspace_id like 'ir_%'`.execute(tx);
        await insertRows(tx, 'record_values', COLUMNS, rows, 4);
        const got = await tx
          .selectFrom('record_values')
          .select([...COLUMNS])
          .where('workspace_id', 'like', 'ir_%')
          .execute();
        const key = (r: Row) => JSON.stringify(COLUMNS.map((c) => r[c]));
        assert.deepEqual(got.map((r) => key({ ...r, value_num: r.value_num === null ? null : Number(r.value_num) })).sort(), rows.map(key).sort());
      });
    });
  }

  test('the columns every row of a statement shares are bound once on SQLite, every value on PostgreSQL', async () => {
    const t = ctx();
    const rows = CASES['chunks that share different columns'] as Row[];
    const { statements } = await statementsOf(() =>
      write(t.deps.db.kysely, async (tx) => {
        await sql`delete from record_values where workspace_id like 'ir_%'`.execute(tx);
        await insertRows(tx, 'record_values', COLUMNS, rows, 4);
      }),
    );
    // Chunks of 4, 4 and 1 rows. The first shares workspace and type; the second only its type.
    const parameters = statements.filter((s) => s.startsWith('insert into "record_values"')).map((s) => (s.match(/\?|\$\d+/g) ?? []).length);
    assert.deepEqual(parameters, t.dialect === 'sqlite' ? [2 + 4 * 4, 1 + 4 * 5, 6] : [24, 24, 6]);
  });
});
