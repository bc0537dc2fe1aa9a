// A meeting's autoCreateRecords writes its new contacts and accounts in multi-row statements
// (docs/meetings.md §Records created for attendees): the records, their value index, trigrams and
// links, their starting history and their created events take about as many statements for 300
// new attendees as for 3, so that a create of 1,000 stays within a request's deadline on
// PostgreSQL (docs/reliability.md §Lost connections).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { meetingBody } from '../helpers/meetings.ts';
import { statementsOf } from '../helpers/sql-spy.ts';

eachDialect('statements of the records a meeting creates', (ctx) => {
  test('300 new attendees take about as many statements as 3, and each record is written whole', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const create = async (tag: string, n: number) => {
      // Three domains: one account each, every contact linked to its domain's account.
      const attendees = Array.from({ length: n }, (_, i) => `${tag}${i}@${tag}${i % 3}.test`);
      const { result, statements } = await statementsOf(() =>
        call(t, s.secret, 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: attendees }, { autoCreateRecords: true })),
      );
      assert.equal(result.statusCode, 200, result.body);
      return { meeting: result.json(), statements: statements.length };
    };
    const few = await create('few', 3);
    const many = await create('many', 300);
    assert.ok(many.statements <= few.statements + 30, `3 new attendees: ${few.statements} statements; 300: ${many.statements}`);

    assert.equal(many.meeting.relationships.$contact.values.length, 300);
    assert.equal(many.meeting.relationships.$account.values.length, 3);
    const db = t.deps.db.kysely;
    const ids = [...many.meeting.relationships.$contact.values, ...many.meeting.relationships.$account.values] as string[];
    const events = await db.selectFrom('events').select(['object_id', 'type']).where('object_id', 'in', ids).execute();
    assert.deepEqual(new Set(events.map((e) => e.object_id)), new Set(ids));
    assert.equal(events.length, ids.length);
    const snapshots = await db.selectFrom('field_history').select('record_id').where('record_id', 'in', ids).where('field', '=', '*').execute();
    assert.equal(snapshots.length, ids.length);
    // A contact reads as made: its address, its account, its created history and event.
    const contact = (await call(t, s.secret, 'GET', `/v1/contacts/${many.meeting.relationships.$contact.values[0]}`)).json();
    assert.equal(contact.relationships.$account.values.length, 1);
    assert.ok(many.meeting.relationships.$account.values.includes(contact.relationships.$account.values[0]));
    const account = (await call(t, s.secret, 'GET', `/v1/accounts/${contact.relationships.$account.values[0]}`)).json();
    assert.equal(account.relationships.$contact.values.length, 100);
    const history = (await call(t, s.secret, 'GET', `/v1/contacts/${contact.id}/fields/$email/history`)).json();
    assert.deepEqual(
      history.data.map((h: { value: unknown; isCreate: boolean }) => [h.value, h.isCreate]),
      [[contact.fields.$email.value, true]],
    );
    const found = (await call(t, s.secret, 'GET', `/v1/contacts?${encodeURIComponent('$email[contains]')}=${contact.fields.$email.value[0]}`)).json();
    assert.deepEqual(
      found.data.map((c: { id: string }) => c.id),
      [contact.id],
    );
  });
});
