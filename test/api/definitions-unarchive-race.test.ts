// `rolodex definition unarchive` beside an update of a record that holds the field (docs/records.md
// §Correcting definitions), on PostgreSQL: an update reads the definitions once it holds its
// record, so one that read them while the field was archived rewrites the record's value index
// without it. Unarchive indexes the values of the records holding the field under their locks, so
// such an update commits first and is then indexed again, or reads the field back once unarchive
// committed: either way the value is found by filters and stays unique. (SQLite has one writer: an
// update and an unarchive never overlap.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { lockRecords } from '../../src/records/repository.ts';
import { setArchived } from '../../src/records/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`unarchive beside an update of a record holding the field [${dialect}]`, () => {
    test('an update that read the definitions before the unarchive leaves the value indexed and unique', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const op = operatorCtx(t.deps.db.kysely, s.workspaceId);
        for (const key of ['code', 'other']) await addField(op, { objectType: 'account', key, label: key, valueType: 'TEXT', unique: true });
        const a = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'A', code: 'x-1' } })).json();
        await write(t.deps.db.kysely, (tx) => setArchived({ ...op, db: tx }, { objectType: 'account', key: 'code', archived: true }));

        // The listing's lock, held here, stops the update (it sets a unique field) after it locked
        // the record and read the definitions, with `code` archived.
        let update: ReturnType<typeof call> | undefined;
        let unarchive: ReturnType<typeof rolodex> | undefined;
        await write(t.deps.db.kysely, async (tx) => {
          await lockRecords(tx, s.workspaceId, 'account');
          await sql`select 1`.execute(tx);
          update = call(t, s.secret, 'POST', `/v1/accounts/${a.id}`, { fields: { other: 'o-1' } });
          const updater = await waiterOf(tx);
          assert.ok(updater, 'the update waits for the listing');
          unarchive = rolodex(t, ['definition', 'unarchive', '--workspace', s.workspaceId, '--type', 'account', '--key', 'code']);
          // The unarchive either ends meanwhile, or waits for the update's lock on the record.
          let ended = false;
          void unarchive.finally(() => (ended = true));
          for (let i = 0; i < 200 && !ended; i++) {
            await sql`select pg_stat_clear_snapshot()`.execute(tx);
            const waiting = await sql`select 1 from pg_stat_activity a where ${updater.pid}::int = any(pg_blocking_pids(a.pid))`.execute(tx);
            if (waiting.rows.length > 0) break;
            await wait(50);
          }
        });
        assert.equal((await update!).statusCode, 200);
        const unarchived = await unarchive!;
        assert.equal(unarchived.code, 0, unarchived.err);

        const found = (await call(t, s.secret, 'GET', '/v1/accounts?code=x-1')).json();
        assert.deepEqual(
          found.data.map((r: { id: string }) => r.id),
          [a.id],
          'the filter finds the record',
        );
        const taken = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'X-1' } });
        assert.deepEqual([taken.statusCode, taken.json().error?.code], [409, 'duplicate_value'], taken.body);
      } finally {
        await t.close();
      }
    });
  });
