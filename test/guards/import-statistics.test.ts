// Plans other sessions made while the tables were small, during an atomic import on PostgreSQL
// (docs/design.md §Database statistics). A server's named statements run generic plans made once
// from the statistics of the moment, and nothing plans them again until the statistics change;
// the import's rows count for no statistics until it commits, so a plan that read a table whole
// when it was small went on doing so over every row the import wrote. The import refreshes the
// statistics as it grows (on other connections); a change of statistics makes every session plan
// its statements again, for the tables' real size. Checked with another session's generic plan of
// a lookup by record id, made on the empty table (a scan of all of it), and run again while the
// import waits before its commit: made again, through the index, once the import refreshed the
// statistics.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import postgres from 'postgres';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { refreshStatistics } from '../../src/db/statistics.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { GROWN, IMPORT_CHUNK, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';

const saved = { grown: { ...GROWN }, chunk: { ...IMPORT_CHUNK } };
after(() => (Object.assign(GROWN, saved.grown), Object.assign(IMPORT_CHUNK, saved.chunk)));

const contact = (i: number) => ({
  object: 'contact',
  externalId: `c${i}`,
  fields: {
    $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' },
    $email: { value: [`ann.${i}@acme.test`], valueType: 'EMAIL' },
  },
});

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`statistics during an atomic import [${dialect}]`, () => {
    // Without the refresh the plan stays the empty table's; that case is not run here, since an
    // ANALYZE of the whole database by any test running beside this one would make it again too.
    test('another session plans for the grown tables once the import refreshed the statistics', async () => {
      const tdb = await createTestDb(dialect);
      after(() => tdb.drop());
      const db = tdb.db.kysely;
      const ws = 'ws_stat';
      await sql`insert into workspaces (id, name, created_at) values (${ws}, ${ws}, ${isoNow()})`.execute(db);
      await sql`analyze record_values`.execute(db);
      Object.assign(GROWN, { first: 400 });
      IMPORT_CHUNK.atomic = 200;
      let refreshed = 0;
      let paused!: () => void;
      const atPause = new Promise<void>((resolve) => (paused = resolve));
      let resume!: () => void;
      const resumed = new Promise<void>((resolve) => (resume = resolve));
      const pause: ImportKind = {
        object: 'pause',
        check: () => ({}),
        lookup: async () => new Map(),
        prepare: async () => {
          while (refreshed === 0) await new Promise((r) => setTimeout(r, 20));
          paused();
          await resumed;
          return { undo: async () => {} };
        },
        upsert: async () => {},
      };
      // Another session, as a server's: it prepares the statement and plans it once, on the
      // statistics of the empty table, before the import starts.
      const session = postgres(tdb.databaseUrl!, { max: 1, onnotice: () => {} });
      after(() => session.end());
      await session.unsafe('set plan_cache_mode = force_generic_plan');
      await session.unsafe('prepare by_record (text[]) as select field from record_values where record_id = any($1)');
      const explain = async () => (await session.unsafe(`explain execute by_record('{con_x}')`)).map((r) => r['QUERY PLAN'] as string).join('\n');
      assert.match(await explain(), /Seq Scan on record_values/, 'planned for the empty table');
      const text = [...Array.from({ length: 3000 }, (_, i) => contact(i)), { object: 'pause', externalId: 'p' }].map((o) => JSON.stringify(o)).join('\n');
      const importing = runImport(operatorCtx(db, ws), {
        kinds: [...importKinds(), pause],
        text,
        commit: 'atomic',
        refreshStatistics: async () => (await refreshStatistics(tdb.db, { growing: true }), void refreshed++),
      });
      await Promise.race([atPause, importing]);
      const plan = await explain();
      resume();
      await importing;
      assert.match(plan, /Index/, `made again for the grown table, through an index:\n${plan}`);
    });
  });
}
