// Field value history and the change log (docs/history.md, docs/events.md) on both databases:
// creates and updates append events and history rows in their own transaction; a no-op write and a
// failed request append nothing; pages are newest first with cursors, identical neighbours collapse
// into the oldest, displayValue follows the field's type; errors and scopes. Every answer is
// validated against our own OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { defineObjectType } from '../../src/definitions/object-types.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, keyFor, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, type Operation, operationFor, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

eachDialect('field history and events', (ctx) => {
  let ops: Operation[];
  const checker = responseChecker();
  before(async () => {
    ops = operationsOf(await loadDocument(ctx()));
  });

  async function api(secret: string, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), secret, method, url, body);
    const why = checker.check(operationFor(ops, method, url), res);
    assert.equal(why, null, `${method} ${url}: ${why}`);
    return res;
  }
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await api(s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function events(workspaceId: string) {
    const rows = await ctx().deps.db.kysely.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body));
  }

  test('create and update: events with the object and changes, history newest first with isCreate', async () => {
    const s = await seedWorkspace(ctx());
    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ada', lastName: 'Byron' }, $email: ['ada@x.test'] } });
    const updated = await ok(s, 'POST', `/v1/contacts/${con.id}`, { fields: { $name: { firstName: 'Ada', lastName: 'Lovelace' } } });
    // A write that changes nothing appends nothing.
    await ok(s, 'POST', `/v1/contacts/${con.id}`, { fields: { $name: { lastName: 'Lovelace', firstName: 'Ada' } } });
    // A failed request appends nothing either.
    const bad = await api(s.secret, 'POST', `/v1/contacts/${con.id}`, { fields: { $email: 'not an address' } });
    assert.equal(bad.statusCode, 400);

    const evs = await events(s.workspaceId);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['contact.created', 'contact.updated'],
    );
    const [created, changed] = evs;
    assert.match(created.id, /^evt_[0-9a-z]{26}$/);
    assert.equal(created.workspaceId, s.workspaceId);
    assert.deepEqual(created.actor, { type: 'user', id: s.userId });
    assert.deepEqual(created.data, { object: con });
    assert.equal(created.occurredAt, con.createdAt);
    assert.deepEqual(changed.data.object, updated);
    assert.deepEqual(changed.data.changes, { $name: { from: { firstName: 'Ada', lastName: 'Byron' }, to: { firstName: 'Ada', lastName: 'Lovelace' } } });

    const h = await ok(s, 'GET', `/v1/contacts/${con.id}/fields/$name/history`);
    assert.deepEqual(h, {
      data: [
        {
          value: { firstName: 'Ada', lastName: 'Lovelace' },
          valueType: 'FULL_NAME',
          displayValue: 'Ada Lovelace',
          recordedAt: updated.updatedAt,
          isCreate: false,
        },
        { value: { firstName: 'Ada', lastName: 'Byron' }, valueType: 'FULL_NAME', displayValue: 'Ada Byron', recordedAt: con.createdAt, isCreate: true },
      ],
      hasMore: false,
      nextCursor: null,
    });
    // A field never set: its one entry is the null it was created with.
    const photo = await ok(s, 'GET', `/v1/contacts/${con.id}/fields/$profilePhotoUrl/history`);
    assert.deepEqual(photo.data, [{ value: null, valueType: 'URL', displayValue: null, recordedAt: con.createdAt, isCreate: true }]);
    const email = await ok(s, 'GET', `/v1/contacts/${con.id}/fields/$email/history`);
    assert.equal(email.data[0].displayValue, 'ada@x.test');
  });

  test('a workspace key acts as workspace_key; relationship changes are in the event, not in history', async () => {
    const s = await seedWorkspace(ctx());
    const wsKey = await keyFor(ctx(), s.workspaceId, null);
    const acc = (await api(wsKey, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json();
    const opp = (await api(wsKey, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } })).json();
    const acc2 = (await api(wsKey, 'POST', '/v1/accounts', { fields: { $name: 'Beta' } })).json();
    await api(wsKey, 'POST', `/v1/opportunities/${opp.id}`, { fields: { $stage: 'Qualified' }, relationships: { $account: { replace: acc2.id } } });
    const evs = await events(s.workspaceId);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['account.created', 'opportunity.created', 'account.created', 'opportunity.updated'],
    );
    assert.equal(evs[0].actor.type, 'workspace_key');
    assert.match(evs[0].actor.id, /^key_/);
    const ch = evs[3].data.changes;
    assert.deepEqual(Object.keys(ch).sort(), ['$account', '$stage']);
    assert.deepEqual(ch.$account, { from: [acc.id], to: [acc2.id] });
    const stage = await ok(s, 'GET', `/v1/opportunities/${opp.id}/fields/$stage/history`);
    assert.deepEqual(
      stage.data.map((e: any) => [e.displayValue, e.isCreate]),
      [
        ['Qualified', false],
        ['Lead', true],
      ],
    );
    assert.match(stage.data[0].value, /^opt_/);
  });

  test('cursor pages, collapsing into the oldest, errors and scopes', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'v0' } });
    for (let i = 1; i <= 7; i++) await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: `v${i}` } });
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page: any = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history?limit=3${after ? `&after=${after}` : ''}`);
      seen.push(...page.data.map((e: any) => e.value));
      assert.equal(page.hasMore, page.nextCursor !== null);
      after = page.nextCursor;
      pages++;
    } while (after);
    assert.equal(pages, 3);
    assert.deepEqual(seen, ['v7', 'v6', 'v5', 'v4', 'v3', 'v2', 'v1', 'v0']);

    // Identical neighbours (a writer that compared with another value) show once, as the oldest.
    const db = ctx().deps.db.kysely;
    await db
      .insertInto('field_history')
      .values([
        { record_id: acc.id, field: '$name', seq: 8, workspace_id: s.workspaceId, value: '"v7"', recorded_at: '2099-01-01T00:00:00.000Z', is_create: 0 },
        { record_id: acc.id, field: '$name', seq: 9, workspace_id: s.workspaceId, value: '"v7"', recorded_at: '2099-01-02T00:00:00.000Z', is_create: 0 },
      ])
      .execute();
    const first = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history?limit=1`);
    assert.deepEqual(
      first.data.map((e: any) => e.value),
      ['v7'],
    );
    assert.notEqual(first.data[0].recordedAt, '2099-01-02T00:00:00.000Z');
    const second = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history?limit=1&after=${first.nextCursor}`);
    assert.deepEqual(
      second.data.map((e: any) => e.value),
      ['v6'],
    );

    const refused = async (url: string, status: number, code: string, param?: string, secret = s.secret) => {
      const res = await api(secret, 'GET', url);
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      assert.equal(res.json().error.code, code);
      if (param) assert.equal(res.json().error.param, param);
    };
    const base = `/v1/accounts/${acc.id}/fields`;
    await refused(`${base}/nope/history`, 400, 'unknown_field', 'fieldKey');
    await refused(`${base}/$contact/history`, 400, 'unknown_field', 'fieldKey');
    await refused(`${base}/$name/history?after=garbage`, 400, 'invalid_parameter', 'after');
    await refused(`${base}/$name/history?limit=0`, 400, 'invalid_parameter');
    await refused(`${base}/$name/history?limit=101`, 400, 'invalid_parameter');
    await refused(`${base}/$name/history?offset=3`, 400, 'invalid_parameter');
    await refused(`/v1/accounts/acc_nope/fields/$name/history`, 404, 'resource_not_found');
    await refused(`/v1/contacts/${acc.id}/fields/$name/history`, 404, 'resource_not_found');
    const other = await seedWorkspace(ctx());
    await refused(`${base}/$name/history`, 404, 'resource_not_found', undefined, other.secret);
    const noRead = await keyFor(ctx(), s.workspaceId, s.userId, ['contacts:read']);
    await refused(`${base}/$name/history`, 403, 'insufficient_scope', undefined, noRead);
  });

  test('a cursor pages only the record and field it came from; one from elsewhere or forged is refused', async () => {
    const s = await seedWorkspace(ctx());
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'a0', $website: ['https://a0.test'] } });
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'b0' } });
    for (let i = 1; i <= 4; i++) {
      await ok(s, 'POST', `/v1/accounts/${a.id}`, { fields: { $name: `a${i}`, $website: [`https://a${i}.test`] } });
      await ok(s, 'POST', `/v1/accounts/${b.id}`, { fields: { $name: `b${i}` } });
    }
    const first = await ok(s, 'GET', `/v1/accounts/${a.id}/fields/$name/history?limit=1`);
    const cursor = first.nextCursor as string;
    assert.ok(cursor);
    // Its own record and field: the next page, and so on to the end.
    const seen = [...first.data.map((e: any) => e.value)];
    for (let after: string | null = cursor; after;) {
      const page: any = await ok(s, 'GET', `/v1/accounts/${a.id}/fields/$name/history?limit=2&after=${after}`);
      seen.push(...page.data.map((e: any) => e.value));
      after = page.nextCursor;
    }
    assert.deepEqual(seen, ['a4', 'a3', 'a2', 'a1', 'a0']);
    const bPage = await ok(s, 'GET', `/v1/accounts/${b.id}/fields/$name/history?limit=1`);

    const refused = async (url: string) => {
      const res = await api(s.secret, 'GET', url);
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json().error.code, 'invalid_parameter', res.body);
      assert.equal(res.json().error.param, 'after', res.body);
    };
    // Another record's, another field's (of this record), another record's on this one.
    await refused(`/v1/accounts/${b.id}/fields/$name/history?after=${cursor}`);
    await refused(`/v1/accounts/${a.id}/fields/$website/history?after=${cursor}`);
    await refused(`/v1/accounts/${a.id}/fields/$name/history?after=${bPage.nextCursor}`);
    // Made up: bare positions, and this cursor changed to name an entry the field does not have.
    const b64 = (x: string) => Buffer.from(x).toString('base64url');
    await refused(`/v1/accounts/${a.id}/fields/$name/history?after=${b64('h2')}`);
    await refused(`/v1/accounts/${a.id}/fields/$name/history?after=${b64('h20')}`);
    const forged = b64(Buffer.from(cursor, 'base64url').toString().replace(/^h\d+/, 'h20'));
    assert.notEqual(forged, cursor);
    await refused(`/v1/accounts/${a.id}/fields/$name/history?after=${forged}`);
  });

  test('a record no writer recorded at its start: a field it never changed shows its value; a field it changed shows only the changes', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Start', $website: ['https://start.test'] } });
    // As a writer of an earlier version left it: the record without its starting snapshot.
    const db = ctx().deps.db.kysely;
    await db.deleteFrom('field_history').where('record_id', '=', acc.id).execute();
    const alone = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history`);
    assert.deepEqual(
      alone.data.map((e: any) => [e.value, e.isCreate]),
      [['Start', false]],
    );
    await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'Second' } });
    await ok(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'Third' } });
    // The value before the first recorded change is unknown: no entry stands for it, least of all
    // the value now, dated now, below the changes that led to it.
    const changed = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history`);
    assert.deepEqual(
      changed.data.map((e: any) => e.value),
      ['Third', 'Second'],
    );
    const first = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history?limit=1`);
    assert.equal(first.hasMore, true);
    const rest = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$name/history?limit=1&after=${first.nextCursor}`);
    assert.deepEqual([rest.data.map((e: any) => e.value), rest.hasMore, rest.nextCursor], [['Second'], false, null]);
    // A field the record never changed still shows its one value.
    const site = await ok(s, 'GET', `/v1/accounts/${acc.id}/fields/$website/history`);
    assert.deepEqual(
      site.data.map((e: any) => e.value),
      [['https://start.test']],
    );
  });

  test('custom objects: history under /v1/objects, CURRENCY and select display values', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await defineObjectType(op, { slug: 'project', label: 'Projects' });
    await addField(op, { objectType: 'project', key: 'budget', label: 'Budget', valueType: 'CURRENCY', currency: 'USD' });
    const p = await ok(s, 'POST', '/v1/objects/project/values', { fields: { budget: 1000 } });
    await ok(s, 'POST', `/v1/objects/project/values/${p.id}`, { fields: { budget: 1234.5 } });
    const h = await ok(s, 'GET', `/v1/objects/project/values/${p.id}/fields/budget/history`);
    assert.deepEqual(
      h.data.map((e: any) => e.displayValue),
      ['1234.5 USD', '1000 USD'],
    );
    const evs = await events(s.workspaceId);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['project.created', 'project.updated'],
    );
    const res = await api(s.secret, 'GET', `/v1/objects/nope/values/${p.id}/fields/budget/history`);
    assert.equal(res.statusCode, 404);
  });
});
