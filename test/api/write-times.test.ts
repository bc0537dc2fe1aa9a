// The times a write stamps (docs/records.md §Times of writes), on both databases: a request's clock
// is taken when it arrives, so a request whose body arrives late commits after a write that
// started later. Its change is still the newest: the record's updatedAt, the other end of a link,
// a merge's primary, a meeting's updatedAt and the field history never move backwards. Records made
// in one millisecond list in the order they were made (docs/records.md §Listing).
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, headers, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { meetingBody } from '../helpers/meetings.ts';

eachDialect('times of writes', (ctx) => {
  /**
   * Sends `url` with `body` whose bytes arrive only after `meanwhile` has been answered: the slow
   * request's clock is older than every write of `meanwhile`, its commit later.
   */
  async function late(t: TestApp, s: Seeded, url: string, body: unknown, meanwhile: () => Promise<void>) {
    const stream = new PassThrough();
    const slow = t.app.inject({ method: 'POST', url, headers: headers(s.secret, { 'content-type': 'application/json' }), payload: stream });
    // The request has arrived (its clock is taken) before the other write starts.
    await sleep(20);
    await meanwhile();
    await sleep(5);
    stream.end(JSON.stringify(body));
    const res = await slow;
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }
  async function ok(t: TestApp, s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(t, s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }

  test('an update committed after another never has an earlier updatedAt, nor its history an earlier recordedAt', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    let fast = '';
    const slow = await late(t, s, `/v1/accounts/${a.id}`, { fields: { $name: 'Slow' } }, async () => {
      fast = (await ok(t, s, 'POST', `/v1/accounts/${a.id}`, { fields: { $name: 'Fast' } })).updatedAt;
    });
    assert.equal(slow.fields.$name.value, 'Slow');
    assert.ok(slow.updatedAt >= fast, `the later commit's updatedAt ${slow.updatedAt} is not before ${fast}`);
    const got = await ok(t, s, 'GET', `/v1/accounts/${a.id}`);
    assert.equal(got.updatedAt, slow.updatedAt);
    const history = (await ok(t, s, 'GET', `/v1/accounts/${a.id}/fields/$name/history`)).data as { value: string; recordedAt: string }[];
    assert.deepEqual(
      history.map((h) => h.value),
      ['Slow', 'Fast', 'Acme'],
    );
    const times = history.map((h) => h.recordedAt);
    assert.deepEqual(times, [...times].sort().reverse(), `history newest first has its times newest first: ${times.join(' ')}`);
    assert.equal(times[0], slow.updatedAt);
    // The event of the later commit carries the time it gave the record.
    const events = await t.deps.db.kysely.selectFrom('events').select(['occurred_at', 'body']).where('object_id', '=', a.id).orderBy('seq').execute();
    const last = events.at(-1);
    assert.equal(last?.occurred_at, slow.updatedAt);
    assert.equal(JSON.parse(last?.body ?? '{}').occurredAt, slow.updatedAt);
  });

  test('the other end of a two-sided link keeps a later updatedAt that a write committed first gave it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const contact = await ok(t, s, 'POST', '/v1/contacts', { fields: {} });
    let fast = '';
    await late(t, s, `/v1/contacts/${contact.id}`, { relationships: { $account: { replace: account.id } } }, async () => {
      fast = (await ok(t, s, 'POST', `/v1/accounts/${account.id}`, { fields: { $name: 'Acme Inc' } })).updatedAt;
    });
    const got = await ok(t, s, 'GET', `/v1/accounts/${account.id}`);
    assert.deepEqual(got.relationships.$contact.values, [contact.id]);
    assert.ok(got.updatedAt >= fast, `the account's updatedAt ${got.updatedAt} moved back from ${fast}`);
  });

  test("a merge's primary and a meeting keep their updatedAt moving forwards", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const p = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const d = await ok(t, s, 'POST', '/v1/accounts', { fields: { $name: 'Acme dup', $website: 'https://acme.test' } });
    let fast = '';
    await late(t, s, '/v1/accounts/merge', { primaryId: p.id, duplicateId: d.id }, async () => {
      fast = (await ok(t, s, 'POST', `/v1/accounts/${p.id}`, { fields: { $name: 'Acme Inc' } })).updatedAt;
    });
    const merged = await ok(t, s, 'GET', `/v1/accounts/${p.id}`);
    assert.deepEqual(merged.fields.$website.value, ['https://acme.test']);
    assert.ok(merged.updatedAt >= fast, `the primary's updatedAt ${merged.updatedAt} moved back from ${fast}`);
    const times = ((await ok(t, s, 'GET', `/v1/accounts/${p.id}/fields/$website/history`)).data as { recordedAt: string }[]).map((h) => h.recordedAt);
    assert.equal(times[0], merged.updatedAt);

    const m = await ok(t, s, 'POST', '/v1/meetings', meetingBody({ $privacySetting: 'FULL' }));
    let meetingFast = '';
    const slow = await late(t, s, `/v1/meetings/${m.id}`, { fields: { $privacySetting: 'FULL' } }, async () => {
      meetingFast = (await ok(t, s, 'POST', `/v1/meetings/${m.id}`, { fields: { $privacySetting: null } })).updatedAt;
    });
    assert.equal(slow.fields.$privacySetting.value, 'FULL');
    assert.ok(slow.updatedAt >= meetingFast, `the meeting's updatedAt ${slow.updatedAt} moved back from ${meetingFast}`);
  });

  test('an import whose clock started before an API write does not move the record back to it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const line = (name: string) => JSON.stringify({ object: 'account', externalId: 'a-1', fields: { $name: { value: name, valueType: 'TEXT' } } });
    const op = (now?: number) => operatorCtx(t.deps.db.kysely, s.workspaceId, now === undefined ? {} : { now });
    await runImport(op(), { kinds: importKinds(), text: line('Acme') });
    const [made] = (await ok(t, s, 'GET', '/v1/accounts')).data as { id: string }[];
    // A long import's clock is its start, seconds before a write through the API that it then follows.
    const started = Date.now();
    await sleep(5);
    const fast = (await ok(t, s, 'POST', `/v1/accounts/${made?.id}`, { fields: { $name: 'Acme Inc' } })).updatedAt as string;
    await runImport(op(started), { kinds: importKinds(), text: line('Acme Imported') });
    const got = await ok(t, s, 'GET', `/v1/accounts/${made?.id}`);
    assert.equal(got.fields.$name.value, 'Acme Imported');
    assert.ok(got.updatedAt >= fast, `the imported record's updatedAt ${got.updatedAt} moved back from ${fast}`);
    const times = ((await ok(t, s, 'GET', `/v1/accounts/${made?.id}/fields/$name/history`)).data as { recordedAt: string }[]).map((h) => h.recordedAt);
    assert.deepEqual(times, [...times].sort().reverse());
    assert.equal(times[0], got.updatedAt);
    const events = await t.deps.db.kysely
      .selectFrom('events')
      .select('body')
      .where('object_id', '=', made?.id ?? '')
      .orderBy('seq')
      .execute();
    assert.equal(JSON.parse(events.at(-1)?.body ?? '{}').occurredAt, got.updatedAt);
  });

  test('a meeting re-imported by an import whose clock started before an API update keeps the later updatedAt', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const fields = (title: string) => ({
      $title: { value: title, valueType: 'TEXT' },
      $startDate: { value: '2026-01-05T10:00:00Z', valueType: 'DATETIME' },
      $endDate: { value: '2026-01-05T11:00:00Z', valueType: 'DATETIME' },
    });
    const line = (title: string) => JSON.stringify({ object: 'meeting', externalId: 'm-1', fields: fields(title) });
    const op = (now?: number) => operatorCtx(t.deps.db.kysely, s.workspaceId, now === undefined ? {} : { now });
    await runImport(op(), { kinds: importKinds(), text: line('Kick-off') });
    const [made] = (await ok(t, s, 'GET', '/v1/meetings')).data as { id: string }[];
    const started = Date.now();
    await sleep(5);
    const fast = (await ok(t, s, 'POST', `/v1/meetings/${made?.id}`, { fields: { $privacySetting: 'FULL' } })).updatedAt as string;
    await runImport(op(started), { kinds: importKinds(), text: line('Kick-off, imported') });
    const got = await ok(t, s, 'GET', `/v1/meetings/${made?.id}`);
    assert.equal(got.fields.$title.value, 'Kick-off, imported');
    assert.ok(got.updatedAt >= fast, `the imported meeting's updatedAt ${got.updatedAt} moved back from ${fast}`);
    const events = await t.deps.db.kysely
      .selectFrom('events')
      .select(['occurred_at', 'body'])
      .where('object_id', '=', made?.id ?? '')
      .orderBy('seq')
      .execute();
    const last = events.at(-1);
    assert.equal(JSON.parse(last?.body ?? '{}').type, 'meeting.updated');
    assert.equal(last?.occurred_at, got.updatedAt);
    assert.equal(JSON.parse(last?.body ?? '{}').occurredAt, got.updatedAt);
    assert.equal(JSON.parse(last?.body ?? '{}').data.object.updatedAt, got.updatedAt);
  });

  test('records created in one millisecond list newest first: the contacts a meeting creates, in the order it made them', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const emails = Array.from({ length: 8 }, (_, i) => `guest${i}@elsewhere${i}.test`);
    const meeting = await call(t, s.secret, 'POST', '/v1/meetings', { ...meetingBody({ $attendeeEmails: emails }), autoCreateRecords: true });
    assert.equal(meeting.statusCode, 200, meeting.body);
    const contacts = (await ok(t, s, 'GET', '/v1/contacts')).data as { createdAt: string; fields: { $email: { value: string[] } } }[];
    assert.equal(new Set(contacts.map((c) => c.createdAt)).size, 1, 'made in one millisecond');
    assert.deepEqual(
      contacts.map((c) => c.fields.$email.value[0]),
      [...emails].reverse(),
    );
    // A filtered page orders them the same way.
    const filtered = (await ok(t, s, 'GET', `/v1/contacts?${encodeURIComponent('$email[contains]')}=guest`)).data as typeof contacts;
    assert.deepEqual(
      filtered.map((c) => c.fields.$email.value[0]),
      [...emails].reverse(),
    );
  });
});
