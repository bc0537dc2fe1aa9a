// Meetings (docs/meetings.md) on both databases: the access matrix with canaries, past-only dates,
// transcripts, updates, derived relationships, autoCreateRecords, and every answer checked against
// our own OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadDefinitions } from '../../src/definitions/service.ts';
import { filteredPage, parseFilters } from '../../src/records/filter/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { meetingIdsFor } from '../../src/meetings/derived.ts';
import { checkDates } from '../../src/meetings/rules.ts';
import { createUser } from '../../src/users/service.ts';
import { eachDialect, keyFor, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { importInto } from '../helpers/emails.ts';
import { assertError } from '../helpers/files.ts';
import { ago, checkedCall, meetingBody, pendingTranscript, putRecord, transcript } from '../helpers/meetings.ts';
import { loadDocument, type Operation, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

test('dates: the request clock is the boundary; start after end is refused', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  assert.deepEqual(checkDates('2026-03-01T11:00:00Z', '2026-03-01T12:00:00.000Z', now), { start: '2026-03-01T11:00:00.000Z', end: '2026-03-01T12:00:00.000Z' });
  assert.throws(() => checkDates('2026-03-01T11:00:00Z', '2026-03-01T12:00:00.001Z', now), { code: 'invalid_value', param: 'fields.$endDate' });
  assert.throws(() => checkDates('2026-03-01T12:00:00.001Z', '2026-03-01T12:00:00.001Z', now), { code: 'invalid_value', param: 'fields.$startDate' });
  assert.throws(() => checkDates('2026-03-01T11:00:00Z', '2026-03-01T10:00:00Z', now), { code: 'invalid_value', param: 'fields.$endDate' });
  assert.throws(() => checkDates('2026-03-01 11:00', '2026-03-01T10:00:00Z', now), { code: 'invalid_value', param: 'fields.$startDate' });
  assert.throws(() => checkDates('2026-03-01T11:00:00', '2026-03-01T11:00:00Z', now), { code: 'invalid_value', param: 'fields.$startDate' });
  assert.deepEqual(checkDates('2026-03-01T13:00:00+02:00', '2026-03-01T11:30:00Z', now).start, '2026-03-01T11:00:00.000Z');
});

/** API-shaped create fields as an import line writes them (`{value, valueType}`). */
function importFields(fields: Record<string, unknown>): Record<string, { value: unknown; valueType: string }> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { value: v, valueType: k === '$title' ? 'TEXT' : 'DATETIME' }]));
}

eachDialect('meetings', (ctx) => {
  let ops: Map<string, Operation>;
  const checker = responseChecker();
  before(async () => {
    ops = new Map(operationsOf(await loadDocument(ctx())).map((o) => [o.operationId, o]));
  });
  const api = () => checkedCall(ctx(), ops, checker);

  async function people(t: TestApp) {
    const s = await seedWorkspace(t);
    const ws = s.workspaceId;
    const octx = operatorCtx(t.deps.db.kysely, ws);
    const mk = async (email: string) => {
      const u = await createUser(octx, { email, role: 'member' });
      return keyFor(t, ws, u.id);
    };
    return {
      s,
      ws,
      organizer: await mk('Org@Acme.test'),
      attendee: await mk('att@acme.test'),
      other: await mk('other@acme.test'),
      wsKey: await keyFor(t, ws, null),
    };
  }

  test('access matrix: organizer, attendee, other user, workspace key × FULL and METADATA; canaries never leak', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const canary = `CANARYDESC${Math.random().toString(36).slice(2)}`;
    const made: Record<string, { id: string; file: string }> = {};
    for (const privacy of [null, 'FULL', 'METADATA'] as const) {
      const file = await transcript(t, p.s.secret, `transcript ${canary}`);
      const res = await call(
        p.s.secret,
        'createMeeting',
        'POST',
        '/v1/meetings',
        meetingBody(
          {
            $description: `${canary} ${privacy}`,
            $organizerEmail: 'org@ACME.test',
            $attendeeEmails: ['ATT@acme.test', 'x@elsewhere.test'],
            $privacySetting: privacy,
          },
          { relationships: { $transcript: file } },
        ),
      );
      assert.equal(res.statusCode, 200, res.body);
      const m = res.json();
      // The creator is neither organizer nor attendee: the privacy setting decides.
      assert.equal(m.accessLevel, privacy === 'METADATA' ? 'METADATA' : 'FULL');
      assert.equal(m.fields.$privacySetting.value, privacy);
      assert.deepEqual(m.relationships.$transcript.values, privacy === 'METADATA' ? [] : [file]);
      made[String(privacy)] = { id: m.id, file };
    }
    const callers = { organizer: p.organizer, attendee: p.attendee, other: p.other, workspace: p.wsKey };
    for (const [who, key] of Object.entries(callers)) {
      const list = await call(key, 'listMeetings', 'GET', '/v1/meetings');
      assert.equal(list.statusCode, 200);
      assert.equal(list.json().totalCount, 3, `${who}: every meeting counts`);
      for (const [privacy, m] of Object.entries(made)) {
        const full = who === 'organizer' || who === 'attendee' || privacy !== 'METADATA';
        const one = await call(key, 'getMeeting', 'GET', `/v1/meetings/${m.id}`);
        const fromList = list.json().data.find((x: { id: string }) => x.id === m.id);
        for (const r of [one.json(), fromList]) {
          assert.equal(r.accessLevel, full ? 'FULL' : 'METADATA', `${who} on ${privacy}`);
          assert.equal(r.fields.$description.value, full ? `${canary} ${privacy}` : null);
          assert.deepEqual(r.relationships.$transcript.values, full ? [m.file] : []);
          assert.equal(r.fields.$privacySetting.value, privacy === 'null' ? null : privacy);
          assert.equal(r.fields.$title.value, 'Weekly sync', 'metadata stays');
        }
        if (!full) {
          assert.ok(!one.body.includes(canary) && !one.body.includes(m.file), `${who}: canary in ${one.body}`);
          const upd = await call(key, 'updateMeeting', 'POST', `/v1/meetings/${m.id}`, { fields: { $privacySetting: 'FULL' } });
          assertError(upd, 403, 'full_access_required');
        }
      }
      const meta = list.json().data.filter((x: { accessLevel: string }) => x.accessLevel === 'METADATA');
      assert.ok(!JSON.stringify(meta).includes(canary));
    }
    assert.ok(!t.logs().includes(canary), 'no canary in the logs');
  });

  test('past only, on the request clock; closed bodies; transcripts PENDING, of another purpose or workspace → 400', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const soon = new Date(Date.now() + 5_000).toISOString();
    assertError(await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $endDate: soon })), 400, 'invalid_value', 'fields.$endDate');
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $startDate: soon, $endDate: soon })),
      400,
      'invalid_value',
      'fields.$startDate',
    );
    const justNow = new Date(Date.now() - 1).toISOString();
    assert.equal((await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $startDate: justNow, $endDate: justNow }))).statusCode, 200);
    assertError(await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $colour: 'red' })), 400, 'unknown_field', 'fields.$colour');
    // A create's schema holds only the fields a create writes: another key is named before any
    // value is judged, unlike an update's (docs/meetings.md §Writes).
    const keyFirst = meetingBody({ $privacySetting: 'bad', $colour: 'red' });
    assertError(await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', keyFirst), 400, 'unknown_field', 'fields.$colour');
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', { fields: { $title: 'x', $startDate: ago(10) } }),
      400,
      'parameter_missing',
      'fields.$endDate',
    );
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({}, { relationships: { $contact: ['con_x'] } })),
      400,
      'read_only_relationship',
      'relationships.$contact',
    );
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({}, { relationships: { $owner: 'usr_x' } })),
      400,
      'unknown_relationship',
      'relationships.$owner',
    );
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({}, { relationships: {} })),
      400,
      'parameter_missing',
      'relationships.$transcript',
    );
    assertError(
      await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['a@b.test', 'A@b.test'] })),
      400,
      'invalid_value',
      'fields.$attendeeEmails[1]',
    );
    // The same address written alike is refused by the same rule, naming the repeat, not the array.
    const twice = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['a@b.test', 'c@b.test', 'a@b.test'] }));
    assertError(twice, 400, 'invalid_value', 'fields.$attendeeEmails[2]');
    assert.match(twice.json().error.message, /repeats an address of the array/);
    // `null` is how the resource answers attendees never given: sent back, it is taken as such.
    const none = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: null }));
    assert.equal(none.statusCode, 200, none.body);
    assert.equal(none.json().fields.$attendeeEmails.value, null);
    const read = await call(p.s.secret, 'getMeeting', 'GET', `/v1/meetings/${none.json().id}`);
    assert.equal(read.json().fields.$attendeeEmails.value, null);
    // Addresses here are ASCII: the refusal says so, where a bare format name would not.
    const unicode = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $organizerEmail: 'ann@straße.example' }));
    assertError(unicode, 400, 'invalid_value', 'fields.$organizerEmail');
    assert.match(unicode.json().error.message, /must be a bare e-mail address in ASCII \(a domain of other characters in its xn-- form\)\.$/);

    const pending = await pendingTranscript(t, p.s.secret);
    const plain = await transcript(t, p.s.secret, 'no purpose', { purpose: undefined });
    const other = await seedWorkspace(t);
    const foreign = await transcript(t, other.secret, 'elsewhere');
    const cases: Array<[unknown, string, string]> = [
      [pending, 'invalid_value', 'relationships.$transcript'],
      [[plain], 'invalid_value', 'relationships.$transcript[0]'],
      [foreign, 'relationship_entity_missing', 'relationships.$transcript'],
      ['fil_nothing', 'relationship_entity_missing', 'relationships.$transcript'],
    ];
    const before = (await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings')).json().totalCount;
    for (const [id, code, param] of cases) {
      assertError(await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({}, { relationships: { $transcript: id } })), 400, code, param);
    }
    assert.equal((await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings')).json().totalCount, before, 'nothing was created');
    assertError(await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings?sort=x'), 400, 'invalid_parameter');
  });

  test('update: privacy and transcript replace only; no-op keeps updatedAt; idempotent', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const f1 = await transcript(t, p.s.secret, 'one');
    const f2 = await transcript(t, p.s.secret, 'two');
    const m = (
      await call(
        p.s.secret,
        'createMeeting',
        'POST',
        '/v1/meetings',
        meetingBody({ $organizerEmail: 'org@acme.test' }, { relationships: { $transcript: [f1] } }),
      )
    ).json();
    const url = `/v1/meetings/${m.id}`;
    assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { fields: { $title: 'new' } }), 400, 'read_only_field', 'fields.$title');
    assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { fields: { $nope: 1 } }), 400, 'unknown_field', 'fields.$nope');
    // The route's schema judges a value it declares before the keys are checked (docs/meetings.md §Writes).
    const both = { fields: { $privacySetting: 'bad', $title: 'x' } };
    assertError(await call(p.organizer, 'updateMeeting', 'POST', url, both), 400, 'invalid_value', 'fields.$privacySetting');
    assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { fields: {} }), 400, 'parameter_missing', 'fields.$privacySetting');
    assertError(
      await call(p.organizer, 'updateMeeting', 'POST', url, { relationships: { $account: { add: 'acc_x' } } }),
      400,
      'read_only_relationship',
      'relationships.$account',
    );
    assertError(
      await call(p.organizer, 'updateMeeting', 'POST', url, { relationships: { $transcript: { remove: f1 } } }),
      400,
      'parameter_missing',
      'relationships.$transcript.replace',
    );
    assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { relationships: { $transcript: { replace: null } } }), 400, 'invalid_type');
    // A value of several forms is refused naming them (docs/errors.md §Values of several forms).
    const secret = assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { fields: { $privacySetting: 'SECRET' } }), 400, 'invalid_value');
    assert.equal(secret.message, '"fields.$privacySetting" must be "FULL", "METADATA" or null.');
    const five = assertError(await call(p.organizer, 'updateMeeting', 'POST', url, { fields: { $privacySetting: 5 } }), 400, 'invalid_type');
    assert.equal(five.message, '"fields.$privacySetting" must be "FULL", "METADATA" or null.');
    const same = await call(p.organizer, 'updateMeeting', 'POST', url, {});
    assert.equal(same.json().updatedAt, m.updatedAt);
    await new Promise((r) => setTimeout(r, 5));
    const key = { 'idempotency-key': `upd-${m.id}` };
    const body = { fields: { $privacySetting: 'METADATA' }, relationships: { $transcript: { replace: f2 } } };
    const upd = await call(p.organizer, 'updateMeeting', 'POST', url, body, key);
    assert.equal(upd.statusCode, 200, upd.body);
    assert.equal(upd.json().fields.$privacySetting.value, 'METADATA');
    assert.deepEqual(upd.json().relationships.$transcript.values, [f2]);
    assert.ok(upd.json().updatedAt > m.updatedAt);
    const again = await call(p.organizer, 'updateMeeting', 'POST', url, body, key);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, upd.body);
    const still = await call(p.organizer, 'updateMeeting', 'POST', url, body);
    assert.equal(still.json().updatedAt, upd.json().updatedAt, 'values equal to the stored ones change nothing');
    // The workspace key now reads METADATA and may not update.
    assertError(await call(p.wsKey, 'updateMeeting', 'POST', url, { fields: { $privacySetting: null } }), 403, 'full_access_required');
    assertError(await call(p.s.secret, 'getMeeting', 'GET', '/v1/meetings/mtg_nothing'), 404, 'resource_not_found');
    const other = await seedWorkspace(t);
    assertError(await call(other.secret, 'getMeeting', 'GET', url), 404, 'resource_not_found');
  });

  test('create is idempotent: the same key twice makes one meeting', async () => {
    const call = api();
    const p = await people(ctx());
    const body = meetingBody({ $title: 'Once' });
    const a = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', body, { 'idempotency-key': 'mtg-once' });
    const b = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', body, { 'idempotency-key': 'mtg-once' });
    assert.equal(a.body, b.body);
    assert.equal((await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings')).json().totalCount, 1);
  });

  test('$attendeeEmails, a multi-valued EMAIL field, takes one address as a list of one, by the API and by import', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const con = await putRecord(t, p.ws, 'contact', { $email: ['att@acme.test'] });
    const body = meetingBody({ $attendeeEmails: 'Att@Acme.test', $privacySetting: 'METADATA' });
    const made = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', body);
    assert.equal(made.statusCode, 200, made.body);
    const m = made.json();
    assert.deepEqual(m.fields.$attendeeEmails.value, ['Att@Acme.test']);
    assert.deepEqual(m.relationships.$contact.values, [con]);
    // The one attendee takes part: it reads the METADATA meeting at FULL.
    assert.equal((await call(p.attendee, 'getMeeting', 'GET', `/v1/meetings/${m.id}`)).json().accessLevel, 'FULL');
    const bad = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: 'not an address' }));
    assertError(bad, 400, 'invalid_value', 'fields.$attendeeEmails');
    const odd = await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: 5 }));
    assertError(odd, 400, 'invalid_type', 'fields.$attendeeEmails');
    const line = {
      object: 'meeting',
      externalId: 'm-one',
      fields: { ...importFields(meetingBody().fields), $attendeeEmails: { value: 'att@acme.test', valueType: 'EMAIL' } },
    };
    const id = (await importInto(t, p.ws, [line])).ids.meeting?.['m-one'] as string;
    assert.deepEqual((await call(p.s.secret, 'getMeeting', 'GET', `/v1/meetings/${id}`)).json().fields.$attendeeEmails.value, ['att@acme.test']);
  });

  test('derived $contact, $account, $opportunity follow a contact whose email changes; $meeting of records', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const acc = await putRecord(t, p.ws, 'account', { $name: 'Initech' });
    const opp = await putRecord(t, p.ws, 'opportunity', { $name: 'Renewal' }, { $account: [acc] });
    const con = await putRecord(t, p.ws, 'contact', { $email: ['Peter@Initech.test'] }, { $account: [acc] });
    const m = (await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $attendeeEmails: ['peter@initech.test'] }))).json();
    assert.deepEqual(m.relationships.$contact.values, [con]);
    assert.deepEqual(m.relationships.$account.values, [acc]);
    assert.deepEqual(m.relationships.$opportunity.values, [opp]);
    const octx = operatorCtx(t.deps.db.kysely, p.ws);
    assert.deepEqual(await meetingIdsFor(octx, { objectType: 'contact', ids: [con] }), new Map([[con, [m.id]]]));
    assert.deepEqual(await meetingIdsFor(octx, { objectType: 'account', ids: [acc] }), new Map([[acc, [m.id]]]));
    assert.deepEqual(await meetingIdsFor(octx, { objectType: 'opportunity', ids: [opp] }), new Map([[opp, [m.id]]]));

    await putRecord(t, p.ws, 'contact', { $email: ['peter@elsewhere.test'] }, { $account: [acc] }, con);
    const after = (await call(p.s.secret, 'getMeeting', 'GET', `/v1/meetings/${m.id}`)).json();
    assert.deepEqual(after.relationships.$contact.values, []);
    assert.deepEqual(after.relationships.$account.values, []);
    assert.deepEqual(after.relationships.$opportunity.values, []);
    assert.equal(after.updatedAt, m.updatedAt, 'derived relationships never move updatedAt');
    assert.deepEqual(await meetingIdsFor(octx, { objectType: 'contact', ids: [con] }), new Map([[con, []]]));
  });

  test('autoCreateRecords: unknown addresses become contacts linked to accounts of their domain, in the create transaction', async () => {
    const t = ctx();
    const call = api();
    const p = await people(t);
    const globex = await putRecord(t, p.ws, 'account', { $name: 'Globex', $website: ['https://Globex.test/about'] });
    await putRecord(t, p.ws, 'account', { $name: 'Other', $website: ['other.test'] });
    const known = await putRecord(t, p.ws, 'contact', { $email: ['known@globex.test'] });
    const body = meetingBody(
      { $organizerEmail: 'org@acme.test', $attendeeEmails: ['Hank@Globex.test', 'known@globex.test', 'solo@gmail.com'] },
      { autoCreateRecords: true },
    );
    const m = (await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', body)).json();
    const db = t.deps.db.kysely;
    const contacts = await db.selectFrom('records').select(['id', 'fields']).where('workspace_id', '=', p.ws).where('kind', '=', 'contact').execute();
    const byEmail = new Map(contacts.map((c) => [JSON.parse(c.fields).$email[0] as string, c.id]));
    assert.deepEqual([...byEmail.keys()].sort(), ['Hank@Globex.test', 'known@globex.test', 'solo@gmail.com'], 'members get no contact');
    const hank = byEmail.get('Hank@Globex.test') as string;
    assert.deepEqual(m.relationships.$contact.values, [known, hank, byEmail.get('solo@gmail.com')].sort());
    // gmail.com is a public mail provider: no account is made for it.
    assert.deepEqual(m.relationships.$account.values, [globex]);
    // Written as every writer of records writes: `contains` finds them (docs/filtering.md §Indexes).
    const octx = operatorCtx(db, p.ws);
    const defs = (await loadDefinitions(octx, { objectType: 'contact' }))!;
    const found = await filteredPage(octx, { defs, filters: parseFilters({ '$email[contains]': 'hank@glob' }, defs), page: { limit: 25, offset: 0 } });
    assert.deepEqual(found.ids, [hank]);
    const links = await db
      .selectFrom('entity_relationships')
      .select(['source_id', 'target_id'])
      .where('name', '=', '$account')
      .where('source_id', 'in', [...byEmail.values()])
      .execute();
    assert.deepEqual(
      links.map((l) => ({ ...l })),
      [{ source_id: hank, target_id: globex }],
    );
    // A refused create creates no contact.
    const bad = meetingBody({ $attendeeEmails: ['new@globex.test'], $endDate: new Date(Date.now() + 60_000).toISOString() }, { autoCreateRecords: true });
    assertError(await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', bad), 400, 'invalid_value');
    const count = await db
      .selectFrom('records')
      .select(db.fn.countAll().as('n'))
      .where('kind', '=', 'contact')
      .where('workspace_id', '=', p.ws)
      .executeTakeFirst();
    assert.equal(Number(count?.n), 3);
  });

  test('list: newest $startDate first, ties by id, exact totalCount at any offset', async () => {
    const call = api();
    const p = await people(ctx());
    const base = Date.now() - 86_400_000;
    for (let i = 0; i < 12; i++) {
      const at = new Date(base + (i % 4) * 60_000).toISOString();
      assert.equal(
        (await call(p.s.secret, 'createMeeting', 'POST', '/v1/meetings', meetingBody({ $title: `m${i}`, $startDate: at, $endDate: at }))).statusCode,
        200,
      );
    }
    const all = (await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings')).json();
    assert.equal(all.totalCount, 12);
    const keys = all.data.map((m: any) => [m.fields.$startDate.value, m.id]);
    const sorted = [...keys].sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? 1 : -1) : a[0] < b[0] ? 1 : -1));
    assert.deepEqual(keys, sorted);
    const page = (await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings?limit=5&offset=10')).json();
    assert.deepEqual(
      page.data.map((m: any) => m.id),
      all.data.slice(10).map((m: any) => m.id),
    );
    assert.equal(page.totalCount, 12);
    const past = (await call(p.s.secret, 'listMeetings', 'GET', '/v1/meetings?offset=12')).json();
    assert.deepEqual(past, { data: [], object: 'list', totalCount: 12 });
  });
});
