// Plans other sessions made while the tables were small, during an atomic import on PostgreSQL
// (docs/design.md §Database statistics). A server's named statements run generic plans, made once
// and made again only when something invalidates the tables they read; the import's rows change no
// statistics until it commits, so a plan that read a table whole when it was empty went on doing so
// over every row the import wrote. Once the import has written GROWN.first objects it has every
// other session plan again (`replanOthers`), from the tables' size on disk. Checked with another
// session's generic plan of a lookup by record id, made on the empty table (a scan of all of it)
// and run again while the import is paused before its commit: it goes through the index.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import postgres from 'postgres';
import { importKinds } from '../../src/cli/import-kinds.ts';
import type { ImportKind } from '../../src/import/kind.ts';
import { GROWN, IMPORT_CHUNK, runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { isoNow } from '../../src/lib/ids.ts';
import { createTestDb, testDialects } from '../helpers/db.ts';
import { keepSettings } from '../helpers/settings.ts';

const contact = (i: number) => ({
  object: 'contact',
  externalId: `c${i}`,
  fields: {
    $name: { value: { firstName: 'Ann', lastName: `Lee${i}` }, valueType: 'FULL_NAME' },
    $email: { value: [`ann.${i}@acme.test`], valueType: 'EMAIL' },
  },
});

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`other sessions' plans during an atomic import [${dialect}]`, () => {
    keepSettings(GROWN, IMPORT_CHUNK);
    test('a plan made on the empty table is made again for the grown one, before the import commits', async () => {
      const tdb = await createTestDb(dialect);
      after(() => tdb.drop());
      const db = tdb.db.kysely;
      const ws = 'ws_replan';
      await sql`insert into workspaces (id, name, created_at) values (${ws}, ${ws}, ${isoNow()})`.execute(db);
      await sql`analyze record_values`.execute(db);
      GROWN.first = 400;
      IMPORT_CHUNK.atomic = 200;
      // Another session, as a server's: it prepares the statement and plans it once, on the
      // empty table, before the import starts.
      const session = postgres(tdb.databaseUrl!, { max: 1, onnotice: () => {} });
      after(() => session.end());
      await session.unsafe('set plan_cache_mode = force_generic_plan');
      await session.unsafe('prepare by_record (text[]) as select field from record_values where record_id = any($1)');
      const explain = async () => (await session.unsafe(`explain execute by_record('{con_x}')`)).map((r) => r['QUERY PLAN'] as string).join('\n');
      assert.match(await explain(), /Seq Scan on record_values/, 'planned for the empty table');
      let plan = '';
      // Written after every contact: waits for the other session's plan to change, 5 s at most.
      const pause: ImportKind = {
        object: 'pause',
        check: () => ({}),
        lookup: async () => new Map(),
        prepare: async () => {
          for (const until = Date.now() + 5000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
            plan = await explain();
            if (!plan.includes('Seq Scan')) break;
          }
          return { undo: async () => {} };
        },
        upsert: async () => {},
      };
      const text = [...Array.from({ length: 3000 }, (_, i) => contact(i)), { object: 'pause', externalId: 'p' }].map((o) => JSON.stringify(o)).join('\n');
      await runImport(operatorCtx(db, ws), { kinds: [...importKinds(), pause], text, commit: 'atomic' });
      assert.match(plan, /Index/, `made again for the grown table, through an index:\n${plan}`);
    });
  });
}
