// autoCreateRecords beside the delete of the account it links a new contact to (docs/meetings.md
// §Records created for attendees, docs/trash.md): on PostgreSQL the accounts a create links to are
// read locked against deletion, as every write's links are, so a delete that comes meanwhile waits
// for the create and then takes the new link into its trash entry: no live link to an account in
// the trash is left, and the link comes back with the account's restore.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { lockPartition, write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { restore } from '../../src/trash/restore.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { meetingBody } from '../helpers/meetings.ts';
import { someoneWaits } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`autoCreateRecords beside an account's delete [${dialect}]`, () => {
    test('the new contact is never left linked to an account in the trash', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const acc = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Globex', $website: ['https://globex.test'] } })).json();
        // The create reads the domain's accounts, then waits here for the contacts' listing while
        // the account's delete runs.
        let release!: () => void;
        const released = new Promise<void>((ok) => (release = ok));
        let held!: () => void;
        const holding = new Promise<void>((ok) => (held = ok));
        const holder = write(t.deps.db.kysely, async (tx) => {
          await lockPartition(tx, RECORDS, [s.workspaceId, 'contact']);
          held();
          assert.ok(await someoneWaits(tx), 'the create waits for the contacts listing');
          await released;
        });
        await holding;
        const created = call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['hank@globex.test'] }, { autoCreateRecords: true }));
        // Give the create time to read the accounts and queue behind the holder.
        await wait(500);
        const deleted = call(t, s.secret, 'DELETE', `/v1/accounts/${acc.id}`);
        // Unlocked, the account's delete committed here, while the create waited.
        await Promise.race([deleted, wait(1500)]);
        release();
        await holder;
        const [m, d] = await Promise.all([created, deleted]);
        assert.equal(m.statusCode, 200, m.body);
        assert.equal(d.statusCode, 200, d.body);
        const contactId = m.json().relationships.$contact.values[0] as string;
        assert.ok(contactId);

        const live = await t.deps.db.kysely.selectFrom('entity_relationships').selectAll().where('target_id', '=', acc.id).execute();
        assert.deepEqual(live, [], 'no live link to the account in the trash');
        assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${contactId}`)).json().relationships.$account.values, []);

        await write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id: acc.id }));
        // The delete waited for the create and took the new link into its entry: the restore brings it back.
        assert.deepEqual((await call(t, s.secret, 'GET', `/v1/contacts/${contactId}`)).json().relationships.$account.values, [acc.id]);
      } finally {
        await t.close();
      }
    });
  });
