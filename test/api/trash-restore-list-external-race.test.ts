// A restore of a list beside a write that gives its externalId to a new list (docs/trash.md
// §Restore): on PostgreSQL the restore takes the lists' lock before it asks whether another list
// holds the externalId, so it waits for that write and then refuses with duplicate_value naming
// `externalId`; it never meets the database's unique index, whose error would say nothing of the
// field. SQLite has one writer at a time: nothing commits between the check and the insert.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { AppError } from '../../src/lib/errors.ts';
import { isoNow, newId } from '../../src/lib/ids.ts';
import { insertList } from '../../src/lists/repository.ts';
import { restore } from '../../src/trash/restore.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { meanwhile } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`a restore of a list whose externalId a new list takes meanwhile [${dialect}]`, () => {
    test('the restore waits for the write and is refused with duplicate_value on externalId', async () => {
      const t = await buildTestApp(dialect);
      try {
        const db = t.deps.db.kysely;
        const s = await seedWorkspace(t);
        const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'Old', $objectType: 'contact' } })).json();
        await sql`update lists set external_id = 'l-1' where id = ${list.id}`.execute(db);
        assert.equal((await call(t, s.secret, 'DELETE', `/v1/lists/${list.id}`)).statusCode, 200);
        const now = isoNow();
        const other = {
          id: newId('lst'),
          workspace_id: s.workspaceId,
          external_id: 'l-1',
          name: 'New',
          object_type: 'contact' as const,
          member_count: 0,
          created_at: now,
          updated_at: now,
        };
        const outcome = await meanwhile(
          t,
          (tx) => insertList(tx, other),
          () => write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: list.id })).catch((err: unknown) => err),
        );
        assert.ok(outcome instanceof AppError, `a refusal of the service, not ${String(outcome)}`);
        assert.deepEqual([outcome.code, outcome.param], ['duplicate_value', 'externalId']);
        const entry = await db.selectFrom('trash').select('id').where('id', '=', list.id).executeTakeFirst();
        assert.equal(entry?.id, list.id, 'the list stays in the trash');
      } finally {
        await t.close();
      }
    });
  });
