// Edges of record values through HTTP on both databases (docs/records.md §Order of checks,
// §Writing fields, §Social handles; docs/design.md §Record values; docs/errors.md §Dates): what is
// answered can be written back and filtered for, a value's error names the path its field has, and
// one value written in several forms is stored as one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addField, addOption } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('record value edges', (ctx) => {
  async function ok(s: Seeded, url: string, body: unknown) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 200, `${url} ${JSON.stringify(body)}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, code: string, param: string) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
    assert.deepEqual([res.json().error.code, res.json().error.param], [code, param], `${JSON.stringify(body)}: ${res.body}`);
    return res.json().error.message as string;
  }
  async function found(s: Seeded, path: string, key: string, value: string): Promise<string[]> {
    const res = await call(ctx(), s.secret, 'GET', `${path}?${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.map((d: { id: string }) => d.id);
  }

  test('a DATETIME whose instant falls outside the years 0000 to 9999 in UTC is refused, so every answer can be written back', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'dt', label: 'When', valueType: 'DATETIME' });
    for (const dt of ['0000-01-01T00:00:00+01:00', '9999-12-31T23:00:00-02:00', '9999-12-31T23:59:59.999-00:01'])
      await refused(s, '/v1/accounts', { fields: { $name: 'A', dt } }, 'invalid_value', 'fields.dt');
    const members = await call(t, s.secret, 'GET', '/v1/members');
    const task = { $title: 'T', $status: 'TODO', $dueAt: '9999-12-31T22:00:00-02:00' };
    await refused(s, '/v1/tasks', { fields: task, relationships: { $assignedTo: members.json().data[0].id } }, 'invalid_value', 'fields.$dueAt');
    const bad = await call(t, s.secret, 'GET', `/v1/accounts?dt=${encodeURIComponent('9999-12-31T23:00:00-02:00')}`);
    assert.deepEqual([bad.statusCode, bad.json().error.code], [400, 'invalid_parameter']);

    // The bounds themselves are kept, and what is answered is taken back as written and as a filter.
    for (const [dt, want] of [
      ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
      ['0000-01-01T01:00:00+01:00', '0000-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ] as const) {
      const made = await ok(s, '/v1/accounts', { fields: { $name: dt, dt } });
      assert.equal(made.fields.dt.value, want);
      const again = await ok(s, `/v1/accounts/${made.id}`, { fields: { dt: made.fields.dt.value } });
      assert.equal(again.fields.dt.value, want);
      assert.ok((await found(s, '/v1/accounts', 'dt', want)).includes(made.id));
    }
  });

  test('a DATETIME takes the forms a meeting date and an import take: `t` and `z` in either case', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'dt', label: 'When', valueType: 'DATETIME' });
    const forms = ['2026-03-01t09:30:00z', '2026-03-01T09:30:00.0009Z', '2026-03-01t15:00+05:30', '2026-03-01T09:30:00.000-00:00'];
    const made: string[] = [];
    for (const dt of forms) {
      const rec = await ok(s, '/v1/accounts', { fields: { $name: dt, dt } });
      assert.equal(rec.fields.dt.value, '2026-03-01T09:30:00.000Z', dt);
      made.push(rec.id);
    }
    for (const dt of forms) assert.deepEqual((await found(s, '/v1/accounts', 'dt', dt)).sort(), [...made].sort(), dt);
    // The meeting dates take the same forms.
    const meeting = await call(ctx(), s.secret, 'POST', '/v1/meetings', {
      fields: { $title: 'Sync', $startDate: '2026-03-01t09:00:00z', $endDate: '2026-03-01t09:30:00z' },
    });
    assert.equal(meeting.statusCode, 200, meeting.body);
    assert.equal(meeting.json().fields.$startDate.value, '2026-03-01T09:00:00.000Z');
    for (const dt of ['2026-03-01 09:30:00Z', '2026-03-01T09:30:00', '2026-03-01T09:30:00z+01:00'])
      await refused(s, '/v1/accounts', { fields: { $name: 'A', dt } }, 'invalid_value', 'fields.dt');
  });

  test("a value's JSON type is judged after its key, and its error names a path the field has", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'account', key: 't', label: 'T', valueType: 'TEXT' });
    await addField(c, { objectType: 'account', key: 'n', label: 'N', valueType: 'NUMBER' });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ nope: [1] }, 'unknown_field', 'fields.nope'],
      [{ nope: { a: { b: 1 } } }, 'unknown_field', 'fields.nope'],
      [{ $accountStatus: [1] }, 'read_only_field', 'fields.$accountStatus'],
      [{ t: { a: [1] } }, 'invalid_type', 'fields.t'],
      [{ n: [1] }, 'invalid_type', 'fields.n'],
      [{ n: [[1]] }, 'invalid_type', 'fields.n'],
      [{ $primaryAddress: { street: { x: 1 } } }, 'invalid_type', 'fields.$primaryAddress.street'],
      [{ $primaryAddress: { city: ['Berlin'] } }, 'invalid_type', 'fields.$primaryAddress.city'],
      [{ $website: [['https://acme.test']] }, 'invalid_type', 'fields.$website[0]'],
    ];
    for (const [fields, code, param] of cases) {
      const message = await refused(s, '/v1/accounts', { fields: { $name: 'A', ...fields } }, code, param);
      assert.ok(message.startsWith(`"${param.replace(/^fields\./, '')}"`) || message.startsWith(`"${param}"`), message);
    }
  });

  test('a URL is one as written: http:// or https:// and a host, no white space, control characters or backslashes', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'u', label: 'U', valueType: 'URL' });
    for (const u of [
      'https://acme .test',
      'https://acme.test/ a',
      'https://ac\nme.test',
      'https://acme.test/a\tb',
      'https:acme.test',
      'https:///acme.test',
      'https://acme.test\\x',
    ])
      await refused(s, '/v1/accounts', { fields: { $name: 'A', u } }, 'invalid_value', 'fields.u');
    await refused(s, '/v1/accounts', { fields: { $name: 'A', $website: ['https://acme.test', 'https://be ta.test'] } }, 'invalid_value', 'fields.$website[1]');
    // White space around a URL is no part of it, as around a name.
    const trimmed = await ok(s, '/v1/accounts', { fields: { $name: 'A', u: ' https://acme.test\n', $website: ['https://acme.test', ' https://beta.test'] } });
    assert.equal(trimmed.fields.u.value, 'https://acme.test');
    assert.deepEqual(trimmed.fields.$website.value, ['https://acme.test', 'https://beta.test']);
    const made = await ok(s, '/v1/accounts', { fields: { $name: 'A', u: 'HTTPS://Acme.test/ä?q=1#x', $website: ['http://acme.test:8080/'] } });
    assert.equal(made.fields.u.value, 'HTTPS://Acme.test/ä?q=1#x');
    assert.deepEqual(made.fields.$website.value, ['http://acme.test:8080/']);
  });

  test('a social handle and every URL of it, percent-encoded or not, are stored as one profile URL', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const want = 'https://linkedin.com/in/j%C3%BCrgen';
    const ids: string[] = [];
    for (const written of ['jürgen', '@jürgen', 'linkedin.com/in/jürgen', 'https://www.linkedin.com/in/j%c3%bcrgen/', want]) {
      const made = await ok(s, '/v1/accounts', { fields: { $name: written, $linkedIn: written } });
      assert.equal(made.fields.$linkedIn.value, want, written);
      ids.push(made.id);
    }
    assert.deepEqual((await found(s, '/v1/accounts', '$linkedIn', 'jürgen')).sort(), ids.sort());
    const fb = await ok(s, '/v1/accounts', { fields: { $name: 'F', $facebook: 'https://facebook.com/Zoë.page' } });
    assert.equal(fb.fields.$facebook.value, 'https://facebook.com/Zo%C3%AB.page');
    await refused(s, '/v1/accounts', { fields: { $name: 'A', $linkedIn: 'https://linkedin.com/in/100%' } }, 'invalid_value', 'fields.$linkedIn');
    const message = await refused(s, '/v1/accounts', { fields: { $name: 'A', $instagram: 'a'.repeat(31) } }, 'invalid_value', 'fields.$instagram');
    assert.match(message, /must be an INSTAGRAM profile URL/);
  });

  test('a relationship is judged by its key before the shape of its ids or operation', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const acc = await ok(s, '/v1/accounts', { fields: { $name: 'A' } });
    const opp = await ok(s, '/v1/opportunities', { fields: { $name: 'O', $stage: 'Lead' }, relationships: { $account: acc.id } });
    const note = await ok(s, '/v1/notes', { fields: { $title: 'N' } });
    const cases: Array<[string, unknown, string, string]> = [
      ['/v1/accounts', { fields: { $name: 'A' }, relationships: { nope: [1] } }, 'unknown_relationship', 'relationships.nope'],
      ['/v1/accounts', { fields: { $name: 'A' }, relationships: { $opportunity: { add: 1 } } }, 'read_only_relationship', 'relationships.$opportunity'],
      [`/v1/accounts/${acc.id}`, { relationships: { nope: 5 } }, 'unknown_relationship', 'relationships.nope'],
      [`/v1/accounts/${acc.id}`, { relationships: { $files: { add: [1] } } }, 'read_only_relationship', 'relationships.$files'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $createdBy: { replace: 7 } } }, 'read_only_relationship', 'relationships.$createdBy'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $owner: 'usr_x' } }, 'invalid_type', 'relationships.$owner'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $owner: { add: [1] } } }, 'invalid_type', 'relationships.$owner.add[0]'],
      [`/v1/opportunities/${opp.id}`, { relationships: { $owner: { replace: { id: 'x' } } } }, 'invalid_type', 'relationships.$owner.replace'],
      [`/v1/notes/${note.id}`, { relationships: { $account: { replace: [acc.id] } } }, 'unknown_field', 'relationships.$account.replace'],
      ['/v1/accounts', { fields: { $name: 'A' }, relationships: { $owner: { id: 'x' } } }, 'invalid_type', 'relationships.$owner'],
    ];
    for (const [url, body, code, param] of cases) await refused(s, url, body, code, param);
  });

  test('an option named twice in a MULTI_SELECT, by label or by id, is refused at its second element', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const c = operatorCtx(t.deps.db.kysely, s.workspaceId);
    await addField(c, { objectType: 'account', key: 'ms', label: 'MS', valueType: 'MULTI_SELECT' });
    for (const label of ['Red', 'Blue']) await addOption(c, { objectType: 'account', fieldKey: 'ms', label });
    const made = await ok(s, '/v1/accounts', { fields: { $name: 'A', ms: ['Red'] } });
    const red = made.fields.ms.value[0];
    await refused(s, '/v1/accounts', { fields: { $name: 'A', ms: ['Blue', 'Red', red] } }, 'invalid_value', 'fields.ms[2]');
    await refused(s, `/v1/accounts/${made.id}`, { fields: { ms: ['Red', 'Blue', 'Red'] } }, 'invalid_value', 'fields.ms[2]');
    await refused(s, '/v1/accounts', { fields: { $name: 'A', $industry: ['Software', 'Retail', 'Software'] } }, 'invalid_value', 'fields.$industry[2]');
  });
});
