// A page of an empty listing on PostgreSQL while another transaction holds many rows of it not yet
// committed (an import's): the page reads none of them (src/db/rank/sql.ts, leafAnchor). A
// reader cannot see those rows, but an index scan visits every entry it passes, and without a
// leaf to read from the page's statement looked for the partition's newest row through all of
// them: a page of the imported type cost more with every row the import wrote, up to the request
// deadline (docs/import.md §Sharing the database). Checked on the buffers the statement touches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { partitionKey } from '../../src/db/rank/index.ts';
import { pagePostgres } from '../../src/db/rank/sql.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';

const UNCOMMITTED = 20_000;

interface Node {
  'Relation Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: Node[];
}

/** The blocks the nodes reading `relation` touched. */
function blocks(n: Node, relation: string): number {
  const own = n['Relation Name'] === relation ? n['Shared Hit Blocks'] + n['Shared Read Blocks'] : 0;
  return own + (n.Plans ?? []).reduce((s, c) => s + blocks(c, relation), 0);
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`a page beside uncommitted rows of its listing [${dialect}]`, () => {
    let tdb: TestDb;
    let other: pg.Client;
    before(async () => {
      tdb = await createTestDb(dialect);
      other = new pg.Client({ connectionString: tdb.databaseUrl });
      await other.connect();
    });
    after(async () => {
      await other.end();
      await tdb.drop();
    });

    test(`the first page of an empty listing reads none of ${UNCOMMITTED} rows another transaction holds`, async () => {
      const ws = 'ws_importing';
      await other.query('begin');
      // The rows alone, as an import writes them before it commits (no workspace row needed).
      await other.query('set local session_replication_role = replica');
      await other.query(
        `insert into records (id, workspace_id, kind, external_id, fields, created_at, updated_at)
         select 'con_' || lpad(i::text, 8, '0'), $1, 'contact', null, '{}', to_char(timestamp '2026-11-01' + i * interval '1 ms', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '2026-11-01T00:00:00.000Z'
         from generate_series(1, ${UNCOMMITTED}) as i`,
        [ws],
      );
      try {
        const stmt = pagePostgres(RECORDS, false, 25);
        const args: Record<string, unknown> = { scope: partitionKey(RECORDS, [ws, 'contact']), k: 0, limit: 25, by0: ws, by1: 'contact' };
        const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`);
        let text = stmt.sql;
        stmt.args.forEach((a, i) => (text = text.replaceAll(new RegExp(`\\$${i + 1}(?!\\d)`, 'g'), literal(args[a]))));
        const r = await tdb.db.kysely.executeQuery<{ 'QUERY PLAN': Array<{ Plan: Node }> }>(
          CompiledQuery.raw(`explain (analyze, buffers, format json) ${text}`),
        );
        const plan = r.rows[0]!['QUERY PLAN'][0]!.Plan;
        const read = blocks(plan, 'records');
        assert.ok(read <= 4, `${read} blocks of records read for a page of an empty listing`);
      } finally {
        await other.query('rollback');
      }
    });
  });
}
