// An update of a record that a delete moves to the trash meanwhile (docs/trash.md §A record in the
// trash is gone from the live tables): on PostgreSQL the update reads the record locked against
// deletion, so it either commits before the delete (which then trashes the record as updated) or
// waits for it and finds the record gone (404). It never answers 200 for a change no record holds,
// nor leaves a link whose source is in the trash.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`an update of a record deleted meanwhile [${dialect}]`, () => {
    test('waits for the delete and answers 404; the trashed contact links nothing', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
        const contact = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: 'Lee' } } })).json();
        let held!: () => void;
        const holding = new Promise<void>((ok) => (held = ok));
        const deleting = write(t.deps.db.kysely, async (tx) => {
          await sql`select id from records where id = ${contact.id} for update`.execute(tx);
          held();
          await someoneWaits(tx);
          await trashRecord({ ...operatorCtx(tx, s.workspaceId), db: tx }, RECORD_TYPES.contact, { id: contact.id });
        });
        await holding;
        const sent = call(t, s.secret, 'POST', `/v1/contacts/${contact.id}`, {
          relationships: { $account: { replace: account.id } },
        });
        await deleting;
        const r = await sent;
        assert.equal(r.statusCode, 404, r.body);
        assert.equal(r.json().error.code, 'resource_not_found');
        const links = await t.deps.db.kysely.selectFrom('entity_relationships').select('target_id').where('source_id', '=', contact.id).execute();
        assert.deepEqual(links, []);
        const again = await call(t, s.secret, 'GET', `/v1/contacts/${contact.id}`);
        assert.equal(again.statusCode, 404);
      } finally {
        await t.close();
      }
    });
  });
