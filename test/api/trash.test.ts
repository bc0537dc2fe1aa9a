// The trash through the API (docs/trash.md) on both databases: the eight deletes answer the
// resource as retrieved just before and again on a repeat; a trashed record is gone from
// retrieves, updates, listings and their totalCount, filters, list-member pages, other records'
// relationships (inverse and derived) and meetings' derived links; writes naming it are refused
// with relationship_entity_inactive; its unique values are free; a restore brings every link back,
// a link of the record to itself too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORDS } from '../../src/records/repository.ts';
import { setArchived } from '../../src/records/service.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, headers, keyFor, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { checkEntries } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

eachDialect('trash', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body: unknown, status: number, code: string, param?: string) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    assert.equal(res.json().error.code, code, res.body);
    if (param !== undefined) assert.equal(res.json().error.param, param, res.body);
  }
  const ids = (page: { data: { id: string }[] }) => page.data.map((r) => r.id);
  const restoreAs = (s: Seeded, id: string) => {
    const db = ctx().deps.db.kysely;
    return write(db, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
  };

  test('an account in the trash: invisible everywhere, links hidden, back after a restore', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme', $website: ['https://acme.test'] } });
    const other = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Other' } });
    const con = await ok(s, 'POST', '/v1/contacts', {
      fields: { $name: { firstName: 'Ann' }, $email: ['ann@acme.test'] },
      relationships: { $account: acc.id },
    });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } });
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $account: acc.id } });
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'account' }, relationships: { $accounts: [acc.id, other.id] } });
    const before = await ok(s, 'GET', `/v1/accounts/${acc.id}`);

    const deleted = await ok(s, 'DELETE', `/v1/accounts/${acc.id}`);
    assert.deepEqual(deleted, before);
    assert.deepEqual(await ok(s, 'DELETE', `/v1/accounts/${acc.id}`, {}), before, 'a repeated delete answers the same body');
    await refused(s, 'GET', `/v1/accounts/${acc.id}`, undefined, 404, 'resource_not_found');
    await refused(s, 'POST', `/v1/accounts/${acc.id}`, { fields: { $name: 'x' } }, 404, 'resource_not_found');
    await refused(s, 'DELETE', `/v1/contacts/${acc.id}`, undefined, 404, 'resource_not_found');
    const page = await ok(s, 'GET', '/v1/accounts');
    assert.deepEqual(ids(page), [other.id]);
    assert.equal(page.totalCount, 1);
    assert.equal((await ok(s, 'GET', '/v1/accounts?$name[equal]=Acme')).totalCount, 0);
    const members = await ok(s, 'GET', `/v1/lists/${list.id}/accounts`);
    assert.deepEqual([ids(members), members.totalCount], [[other.id], 1]);
    // Its contact, opportunity and note are untouched; only the link is hidden.
    const c = await ok(s, 'GET', `/v1/contacts/${con.id}`);
    assert.deepEqual([c.relationships.$account.values, c.updatedAt], [[], con.updatedAt]);
    assert.deepEqual((await ok(s, 'GET', `/v1/opportunities/${opp.id}`)).relationships.$account.values, []);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note.id}`)).relationships.$account.values, []);
    assert.equal((await ok(s, 'GET', `/v1/contacts?$account[equal]=${acc.id}`)).totalCount, 0);
    // Writes naming it are refused.
    await refused(
      s,
      'POST',
      `/v1/contacts/${con.id}`,
      { relationships: { $account: { add: acc.id } } },
      400,
      'relationship_entity_inactive',
      'relationships.$account.add',
    );
    await refused(
      s,
      'POST',
      '/v1/contacts',
      { fields: { $name: { firstName: 'B' } }, relationships: { $account: [acc.id] } },
      400,
      'relationship_entity_inactive',
      'relationships.$account[0]',
    );
    await refused(
      s,
      'POST',
      `/v1/lists/${list.id}`,
      { relationships: { $accounts: { add: [acc.id] } } },
      400,
      'relationship_entity_inactive',
      'relationships.$accounts.add[0]',
    );
    await checkEntries(ctx().deps.db.kysely, RECORDS, [s.workspaceId, 'account']);

    await restoreAs(s, acc.id);
    assert.deepEqual(await ok(s, 'GET', `/v1/accounts/${acc.id}`), before);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$account.values, [acc.id]);
    assert.deepEqual((await ok(s, 'GET', `/v1/opportunities/${opp.id}`)).relationships.$account.values, [acc.id]);
    assert.equal((await ok(s, 'GET', '/v1/accounts')).totalCount, 2);
    assert.equal((await ok(s, 'GET', `/v1/lists/${list.id}/accounts`)).totalCount, 2);
    assert.equal((await ok(s, 'GET', '/v1/accounts?$name[equal]=Acme')).totalCount, 1);
    await checkEntries(ctx().deps.db.kysely, RECORDS, [s.workspaceId, 'account']);
  });

  test('bodies, scopes, and every type: contacts, opportunities, tasks, notes, meetings, lists, custom records', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    await refused(s, 'DELETE', `/v1/accounts/${acc.id}`, { force: true }, 400, 'unknown_field', 'force');
    const noScope = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['accounts:read', 'accounts:update']) };
    await refused(noScope, 'DELETE', `/v1/accounts/${acc.id}`, undefined, 403, 'insufficient_scope');
    const withScope = { ...s, secret: await keyFor(ctx(), s.workspaceId, s.userId, ['accounts:delete']) };
    assert.equal((await ok(withScope, 'DELETE', `/v1/accounts/${acc.id}`)).id, acc.id);

    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' }, $email: ['ann@x.test'] } });
    const meeting = await ok(s, 'POST', '/v1/meetings', {
      fields: { $title: 'Kickoff', $startDate: '2025-01-01T10:00:00Z', $endDate: '2025-01-01T11:00:00Z', $attendeeEmails: ['ann@x.test'] },
    });
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$meeting.values, [meeting.id]);
    assert.deepEqual(await ok(s, 'DELETE', `/v1/meetings/${meeting.id}`), meeting);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$meeting.values, []);
    assert.equal((await ok(s, 'GET', '/v1/meetings')).totalCount, 0);
    await refused(s, 'GET', `/v1/meetings/${meeting.id}`, undefined, 404, 'resource_not_found');
    await restoreAs(s, meeting.id);
    assert.deepEqual(await ok(s, 'GET', `/v1/meetings/${meeting.id}`), meeting);

    // A trashed contact leaves the meeting's derived $contact.
    assert.deepEqual(await ok(s, 'DELETE', `/v1/contacts/${con.id}`), await ok(s, 'DELETE', `/v1/contacts/${con.id}`));
    assert.deepEqual((await ok(s, 'GET', `/v1/meetings/${meeting.id}`)).relationships.$contact.values, []);

    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' } });
    const listed = await ok(s, 'GET', `/v1/lists/${list.id}`);
    assert.deepEqual(await ok(s, 'DELETE', `/v1/lists/${list.id}`), listed);
    assert.equal((await ok(s, 'GET', '/v1/lists')).totalCount, 0);
    await refused(s, 'GET', `/v1/lists/${list.id}/contacts`, undefined, 404, 'resource_not_found');

    const task = await ok(s, 'POST', '/v1/tasks', { fields: { $title: 'T', $status: 'TODO' }, relationships: { $assignedTo: s.userId } });
    assert.equal((await ok(s, 'DELETE', `/v1/tasks/${task.id}`)).id, task.id);
    assert.equal((await ok(s, 'GET', '/v1/tasks')).totalCount, 0);
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' } });
    assert.equal((await ok(s, 'DELETE', `/v1/notes/${note.id}`)).id, note.id);
    const acc2 = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B' } });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc2.id } });
    assert.equal((await ok(s, 'DELETE', `/v1/opportunities/${opp.id}`)).id, opp.id);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc2.id}`)).relationships.$opportunity.values, []);

    const db = ctx().deps.db.kysely;
    const { defineObjectType } = await import('../../src/definitions/object-types.ts');
    await defineObjectType(operatorCtx(db, s.workspaceId), { slug: 'project', label: 'Project' });
    await addField(operatorCtx(db, s.workspaceId), { objectType: 'project', key: 'title', label: 'Title', valueType: 'TEXT' });
    const rec = await ok(s, 'POST', '/v1/objects/project/values', { fields: { title: 'P' } });
    assert.deepEqual(await ok(s, 'DELETE', `/v1/objects/project/values/${rec.id}`), rec);
    assert.equal((await ok(s, 'GET', '/v1/objects/project')).totalCount, 0);
    await refused(s, 'GET', `/v1/objects/project/values/${rec.id}`, undefined, 404, 'resource_not_found');
  });

  test('a delete takes no body or {}: a null body, or any other JSON, is refused and deletes nothing', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    for (const body of [null, [], 'x', 0]) {
      const res = await call(ctx(), s.secret, 'DELETE', `/v1/accounts/${acc.id}`, body);
      assert.deepEqual([res.statusCode, res.json().error?.code], [400, 'invalid_type'], `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().error.message, 'The request body must be of type object.', res.body);
    }
    assert.deepEqual(await ok(s, 'GET', `/v1/accounts/${acc.id}`), acc, 'nothing was deleted');
    assert.deepEqual(await ok(s, 'DELETE', `/v1/accounts/${acc.id}`), acc, 'no body');
    const other = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Other' } });
    assert.deepEqual(await ok(s, 'DELETE', `/v1/accounts/${other.id}`, {}), other, '{}');
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' } });
    const empty = await ctx().app.inject({
      method: 'DELETE',
      url: `/v1/lists/${list.id}`,
      headers: headers(s.secret, { 'content-type': 'application/json' }),
      payload: '',
    });
    assert.equal(empty.statusCode, 200, `an empty body is no body: ${empty.body}`);
  });

  test('unique values are released; a restore that would collide is refused naming the field', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    await addField(operatorCtx(db, s.workspaceId), { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', code: 'X1' } });
    await refused(s, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'x1' } }, 409, 'duplicate_value', 'fields.code');
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'x1' } });
    await assert.rejects(restoreAs(s, a.id), (err: Error & { code?: string; param?: string }) => err.code === 'duplicate_value' && err.param === 'fields.code');
    await ok(s, 'DELETE', `/v1/accounts/${b.id}`);
    await restoreAs(s, a.id);
    assert.equal((await ok(s, 'GET', `/v1/accounts/${a.id}`)).fields.code.value, 'X1');
  });

  test('a restore of a record whose externalId another record took meanwhile is refused naming externalId', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    const line = JSON.stringify({ object: 'account', externalId: 'e-1', fields: { $name: { value: 'E', valueType: 'TEXT' } } });
    const load = async () => (await runImport(op, { kinds: importKinds(), text: line })).ids.account?.['e-1'] as string;
    const first = await load();
    await ok(s, 'DELETE', `/v1/accounts/${first}`);
    const second = await load();
    assert.notEqual(second, first);
    await assert.rejects(restoreAs(s, first), (err: Error & { code?: string; param?: string }) => err.code === 'duplicate_value' && err.param === 'externalId');
    await ok(s, 'DELETE', `/v1/accounts/${second}`);
    await restoreAs(s, first);
    assert.equal((await ok(s, 'GET', `/v1/accounts/${first}`)).externalId, 'e-1');
  });

  test('an archived unique field stays unique: a restore that would share its value is refused, and unarchive refuses records that share one', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    const op = operatorCtx(db, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'zone', label: 'Zone', valueType: 'TEXT', unique: true });
    const archive = (archived: boolean) => write(db, (tx) => setArchived({ ...op, db: tx }, { objectType: 'account', key: 'zone', archived }));
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', zone: 'Z1' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B', zone: 'z1' } });
    await archive(true);
    await assert.rejects(restoreAs(s, a.id), (err: Error & { code?: string; param?: string }) => err.code === 'duplicate_value' && err.param === 'fields.zone');
    // Two records that already share a value (written before the restore checked archived fields)
    // keep the field archived: unarchive says which, and changes nothing.
    await db
      .updateTable('records')
      .set({ fields: JSON.stringify({ $name: 'C', zone: 'Z1' }) })
      .where('id', '=', (await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'C' } })).id)
      .execute();
    await assert.rejects(archive(false), /"zone" is unique, and account records .* both hold "Z1"/);
    assert.equal((await ok(s, 'GET', `/v1/accounts/${b.id}`)).fields.zone, undefined);
    await ok(s, 'DELETE', `/v1/accounts/${b.id}`);
    await archive(false);
    assert.equal((await ok(s, 'GET', '/v1/accounts?zone[equal]=z1')).totalCount, 1);
  });

  test('links between two trashed records come back with whichever is restored last', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: acc.id } });
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [con.id] } });
    await ok(s, 'DELETE', `/v1/accounts/${acc.id}`);
    await ok(s, 'DELETE', `/v1/contacts/${con.id}`);
    await ok(s, 'DELETE', `/v1/lists/${list.id}`);
    await restoreAs(s, con.id);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$account.values, []);
    await restoreAs(s, acc.id);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${con.id}`)).relationships.$account.values, [acc.id]);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$contact.values, [con.id]);
    await restoreAs(s, list.id);
    assert.deepEqual(ids(await ok(s, 'GET', `/v1/lists/${list.id}/contacts`)), [con.id]);
  });

  test('a link of a record to itself comes back with it, and nothing stays held', async () => {
    const s = await seedWorkspace(ctx());
    const db = ctx().deps.db.kysely;
    await addRelationship(operatorCtx(db, s.workspaceId), {
      objectType: 'contact',
      key: 'buddy',
      label: 'Buddy',
      cardinality: 'has_one',
      targetType: 'contact',
    });
    const con = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } });
    const before = await ok(s, 'POST', `/v1/contacts/${con.id}`, { relationships: { buddy: { replace: con.id } } });
    assert.deepEqual(before.relationships.buddy.values, [con.id]);
    await ok(s, 'DELETE', `/v1/contacts/${con.id}`);
    assert.equal((await restoreAs(s, con.id)).links, 1);
    assert.deepEqual(await ok(s, 'GET', `/v1/contacts/${con.id}`), before);
    const held = await db.selectFrom('trash_links').select('trash_id').where('trash_id', '=', con.id).execute();
    assert.deepEqual(held, [], 'the restored entry holds no rows');
  });

  test('Idempotency-Key on a delete', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const h = { 'idempotency-key': 'del-1' };
    const first = await call(ctx(), s.secret, 'DELETE', `/v1/accounts/${acc.id}`, undefined, h);
    const second = await call(ctx(), s.secret, 'DELETE', `/v1/accounts/${acc.id}`, undefined, h);
    assert.equal(first.statusCode, 200);
    assert.equal(second.body, first.body);
  });
});
