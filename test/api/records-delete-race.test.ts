// An update of a record that a delete moves to the trash meanwhile (docs/trash.md §A record in the
// trash is gone from the live tables): on PostgreSQL the update reads the record locked against
// deletion, so it either commits before the delete (which then trashes the record as updated) or
// waits for it and finds the record gone (404). It never answers 200 for a change no record holds,
// nor leaves a link whose source is in the trash. Nor does an update of another record that keeps
// its link to the deleted one (a note's $contact, written with add or remove): the delete moves that
// link into its entry, and the update, which rewrites the relationship's rows, never puts it back;
// nor a merge that moves its duplicate's links onto the primary (docs/merge.md §Links).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { write } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { trashRecord } from '../../src/trash/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { meanwhile, someoneWaits } from '../helpers/pg-locks.ts';

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

    test('an update of a note that keeps a contact deleted meanwhile leaves no link to it; its restore brings it back', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const person = async (lastName: string) =>
          (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'A', lastName } } })).json().id as string;
        const [kept, removed, added] = [await person('Kept'), await person('Removed'), await person('Added')];
        const note = (await call(t, s.secret, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [kept, removed] } })).json();
        // The update reads the note's contacts while the delete of one has moved its link but not
        // committed, and then rewrites the note's $contact rows.
        const r = await meanwhile(
          t,
          (tx) => trashRecord({ ...operatorCtx(tx, s.workspaceId), db: tx }, RECORD_TYPES.contact, { id: kept }),
          () => call(t, s.secret, 'POST', `/v1/notes/${note.id}`, { relationships: { $contact: { add: [added], remove: [removed] } } }),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json().relationships.$contact.values, [added]);
        const links = await t.deps.db.kysely
          .selectFrom('entity_relationships')
          .select('target_id')
          .where('source_id', '=', note.id)
          .where('name', '=', '$contact')
          .execute();
        assert.deepEqual(
          links.map((l) => l.target_id),
          [added],
        );
        const back = await rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, kept]);
        assert.equal(back.code, 0, back.err);
        const after = (await call(t, s.secret, 'GET', `/v1/notes/${note.id}`)).json();
        assert.deepEqual(after.relationships.$contact.values, [added, kept]);
      } finally {
        await t.close();
      }
    });

    test('a merge whose duplicate links an account deleted meanwhile leaves the primary no link to it', async () => {
      const t = await buildTestApp(dialect);
      try {
        const s = await seedWorkspace(t);
        const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
        const person = async (lastName: string, rel = {}) =>
          (await call(t, s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'A', lastName } }, relationships: rel })).json().id as string;
        const [primary, duplicate] = [await person('Primary'), await person('Duplicate', { $account: account })];
        // The merge reads the duplicate's links while the delete of the account has moved its
        // link but not committed, and then gives the primary the duplicate's links.
        const r = await meanwhile(
          t,
          (tx) => trashRecord({ ...operatorCtx(tx, s.workspaceId), db: tx }, RECORD_TYPES.account, { id: account }),
          () => call(t, s.secret, 'POST', '/v1/contacts/merge', { primaryId: primary, duplicateId: duplicate }),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json().primary.relationships.$account.values, []);
        const links = await t.deps.db.kysely.selectFrom('entity_relationships').select('source_id').where('target_id', '=', account).execute();
        assert.deepEqual(links, []);
        // The account's entry holds the link, now of the primary: its restore brings it back.
        const back = await rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, account]);
        assert.equal(back.code, 0, back.err);
        const after = (await call(t, s.secret, 'GET', `/v1/contacts/${primary}`)).json();
        assert.deepEqual(after.relationships.$account.values, [account]);
      } finally {
        await t.close();
      }
    });
  });
