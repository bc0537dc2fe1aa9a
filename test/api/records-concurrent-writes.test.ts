// Writes of one record that overlap (docs/records.md §Concurrent writes): on PostgreSQL an update,
// a merge and a write through a two-sided link wait for a transaction that is changing the same
// record, then read what it committed. Each test holds such a transaction open (a real update, in
// a transaction of its own) until the API's request waits for it: the request must then neither
// write its stale copy back over the change (a lost write) nor fail on the rows the change added.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Tx } from '../../src/db/index.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { customRecordType, RECORD_TYPES, updateRecord } from '../../src/records/service.ts';
import { buildTestApp, call, seedWorkspace } from '../helpers/app.ts';
import { testDialects } from '../helpers/db.ts';
import { importInto } from '../helpers/emails.ts';
import { meanwhile } from '../helpers/pg-locks.ts';

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`writes of a record that another transaction is changing [${dialect}]`, () => {
    async function setUp() {
      const t = await buildTestApp(dialect);
      const s = await seedWorkspace(t);
      await importInto(t, s.workspaceId, [
        { object: 'definition', definition: 'objectType', slug: 'project', label: 'Project' },
        ...['first', 'second'].map((key) => ({ object: 'definition', definition: 'field', objectType: 'project', key, label: key, valueType: 'TEXT' })),
      ]);
      const as = (tx: Tx) => operatorCtx(tx, s.workspaceId);
      return { t, s, as };
    }

    test('an update of a custom record keeps the field another update set meanwhile', async () => {
      const { t, s, as } = await setUp();
      try {
        const project = customRecordType('project');
        const p = (await call(t, s.secret, 'POST', '/v1/objects/project/values', { fields: {} })).json();
        const r = await meanwhile(
          t,
          (tx) => updateRecord(as(tx), { type: project, id: p.id, fields: { first: 'one' } }),
          () => call(t, s.secret, 'POST', `/v1/objects/project/values/${p.id}`, { fields: { second: 'two' } }),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json().fields.first, { value: 'one', valueType: 'TEXT' }, 'the answer shows the change made meanwhile');
        const got = (await call(t, s.secret, 'GET', `/v1/objects/project/values/${p.id}`)).json();
        assert.equal(got.fields.first.value, 'one');
        assert.equal(got.fields.second.value, 'two');
      } finally {
        await t.close();
      }
    });

    test("a merge keeps the primary's field another update set meanwhile", async () => {
      const { t, s, as } = await setUp();
      try {
        const project = customRecordType('project');
        const p = (await call(t, s.secret, 'POST', '/v1/objects/project/values', { fields: {} })).json();
        const d = (await call(t, s.secret, 'POST', '/v1/objects/project/values', { fields: { second: 'two' } })).json();
        const r = await meanwhile(
          t,
          (tx) => updateRecord(as(tx), { type: project, id: p.id, fields: { first: 'one' } }),
          () => call(t, s.secret, 'POST', '/v1/objects/project/merge', { primaryId: p.id, duplicateId: d.id }),
        );
        assert.equal(r.statusCode, 200, r.body);
        const got = (await call(t, s.secret, 'GET', `/v1/objects/project/values/${p.id}`)).json();
        assert.equal(got.fields.first.value, 'one', 'the change made meanwhile is kept');
        assert.equal(got.fields.second.value, 'two', "the duplicate's value is merged in");
      } finally {
        await t.close();
      }
    });

    test("an account's $contact write waits for the contact's own update of the same link", async () => {
      const { t, s, as } = await setUp();
      try {
        const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
        const other = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Globex' } })).json();
        const contact = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: {} })).json();
        // The contact's update links another account, so it holds the contact's rows and not the
        // account's: the account's write waits for it only at the contact it goes on to link, and
        // then appends after the row the update added.
        const r = await meanwhile(
          t,
          (tx) => updateRecord(as(tx), { type: RECORD_TYPES.contact, id: contact.id, relationships: { $account: { add: other.id } } }),
          () => call(t, s.secret, 'POST', `/v1/accounts/${account.id}`, { relationships: { $contact: { add: contact.id } } }),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json().relationships.$contact.values, [contact.id]);
        const got = (await call(t, s.secret, 'GET', `/v1/contacts/${contact.id}`)).json();
        assert.deepEqual(got.relationships.$account.values, [other.id, account.id]);
      } finally {
        await t.close();
      }
    });

    test("an account's $contact replace removes the link the contact's own update wrote again meanwhile", async () => {
      const { t, s, as } = await setUp();
      try {
        const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
        const other = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Globex' } })).json();
        const contact = (await call(t, s.secret, 'POST', '/v1/contacts', { fields: {}, relationships: { $account: account.id } })).json();
        const r = await meanwhile(
          t,
          (tx) => updateRecord(as(tx), { type: RECORD_TYPES.contact, id: contact.id, relationships: { $account: { replace: [account.id, other.id] } } }),
          () => call(t, s.secret, 'POST', `/v1/accounts/${account.id}`, { relationships: { $contact: { replace: null } } }),
        );
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json().relationships.$contact.values, []);
        const got = (await call(t, s.secret, 'GET', `/v1/contacts/${contact.id}`)).json();
        assert.deepEqual(got.relationships.$account.values, [other.id]);
      } finally {
        await t.close();
      }
    });

    test('updates of one note that each add an account all take effect', async () => {
      const { t, s } = await setUp();
      try {
        const accounts: string[] = [];
        for (let i = 0; i < 6; i++) accounts.push((await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: `A${i}` } })).json().id);
        const note = (await call(t, s.secret, 'POST', '/v1/notes', { fields: { $title: 'Call' } })).json();
        const answers = await Promise.all(accounts.map((a) => call(t, s.secret, 'POST', `/v1/notes/${note.id}`, { relationships: { $account: { add: a } } })));
        assert.deepEqual(
          answers.map((a) => a.statusCode),
          accounts.map(() => 200),
        );
        const got = (await call(t, s.secret, 'GET', `/v1/notes/${note.id}`)).json();
        assert.deepEqual([...got.relationships.$account.values].sort(), [...accounts].sort());
      } finally {
        await t.close();
      }
    });
  });
