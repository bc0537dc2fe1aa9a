// Notes and tasks over the record engine (docs/activities.md) on both databases: create, update,
// retrieve and list, their inverse relationships on accounts and opportunities after every
// write, and the rules of their own; every answer validated against our own OpenAPI document.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { addField, addRelationship } from '../../src/definitions/service.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, keyFor, type Seeded, seedWorkspace } from '../helpers/app.ts';
import { loadDocument, type Operation, operationFor, operationsOf, responseChecker } from '../helpers/openapi-ops.ts';

eachDialect('notes and tasks API', (ctx) => {
  let ops: Operation[];
  const checker = responseChecker();
  before(async () => {
    ops = operationsOf(await loadDocument(ctx()));
  });

  async function api(secret: string, method: 'GET' | 'POST', url: string, body?: unknown, extra: Record<string, string> = {}) {
    const res = await call(ctx(), secret, method, url, body, extra);
    const why = checker.check(operationFor(ops, method, url), res);
    assert.equal(why, null, `${method} ${url}: ${why}`);
    return res;
  }
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await api(s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, method: 'GET' | 'POST', url: string, body: unknown, status: number, code: string, param?: string) {
    const res = await api(s.secret, method, url, body);
    assert.equal(res.statusCode, status, `${url} ${JSON.stringify(body)}: ${res.body}`);
    assert.equal(res.json().error?.code, code, `${url} ${JSON.stringify(body)}: ${res.body}`);
    if (param !== undefined) assert.equal(res.json().error.param, param, `${url} ${JSON.stringify(body)}`);
  }
  async function inverse(s: Seeded, path: string, key: string): Promise<string[]> {
    return (await ok(s, 'GET', path)).relationships[key].values;
  }

  test('notes: create, retrieve, update {add} or {remove}; $note on accounts and opportunities after every write', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const acc2 = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Beta' } });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } });

    const note = await ok(s, 'POST', '/v1/notes', {
      fields: { $title: 'Call', $content: '# Notes' },
      relationships: { $account: acc.id, $opportunity: [opp.id] },
    });
    assert.match(note.id, /^nte_/);
    assert.deepEqual(note.fields.$title, { value: 'Call', valueType: 'TEXT' });
    assert.deepEqual(note.fields.$content, { value: '# Notes', valueType: 'MARKDOWN' });
    assert.deepEqual(note.relationships.$createdBy, { cardinality: 'has_one', objectType: 'member', values: [s.userId] });
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc.id}`, '$note'), [note.id]);
    assert.deepEqual(await inverse(s, `/v1/opportunities/${opp.id}`, '$note'), [note.id]);
    assert.deepEqual(await ok(s, 'GET', `/v1/notes/${note.id}`), note);

    const url = `/v1/notes/${note.id}`;
    await refused(
      s,
      'POST',
      url,
      { relationships: { $account: { add: [acc2.id], remove: [acc2.id] } } },
      400,
      'conflicting_membership_change',
      'relationships.$account.remove[0]',
    );
    await refused(s, 'POST', url, { relationships: { $account: { replace: acc2.id } } }, 400, 'unknown_field');
    await refused(s, 'POST', url, { relationships: { $createdBy: { add: s.userId } } }, 400, 'read_only_relationship', 'relationships.$createdBy');
    await refused(s, 'POST', url, { fields: { $title: null } }, 400, 'invalid_value', 'fields.$title');
    await refused(s, 'POST', url, { fields: { colour: 'red' } }, 400, 'unknown_field', 'fields.colour');
    await refused(s, 'POST', '/v1/notes', { fields: { $content: 'x' } }, 400, 'parameter_missing', 'fields.$title');
    await refused(s, 'POST', '/v1/notes', { fields: { $title: 'x' }, relationships: { $createdBy: s.userId } }, 400, 'read_only_relationship');
    await refused(s, 'POST', '/v1/notes', { fields: { $title: 'x' }, relationships: { $account: 'acc_missing' } }, 400, 'relationship_entity_missing');

    const added = await ok(s, 'POST', url, { relationships: { $account: { add: acc2.id } } });
    assert.deepEqual(added.relationships.$account.values, [acc.id, acc2.id]);
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc2.id}`, '$note'), [note.id]);
    const removed = await ok(s, 'POST', url, { relationships: { $account: { remove: acc.id } }, fields: { $content: null } });
    assert.deepEqual(removed.relationships.$account.values, [acc2.id]);
    assert.equal(removed.fields.$content.value, null);
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc.id}`, '$note'), []);
    await ok(s, 'POST', url, { relationships: { $opportunity: { remove: [opp.id] } } });
    assert.deepEqual(await inverse(s, `/v1/opportunities/${opp.id}`, '$note'), []);

    // A workspace key has no user: the author stays empty.
    const wsKey = await keyFor(ctx(), s.workspaceId, null);
    const byKey = await api(wsKey, 'POST', '/v1/notes', { fields: { $title: 'Robot' } });
    assert.equal(byKey.statusCode, 200, byKey.body);
    assert.deepEqual(byKey.json().relationships.$createdBy.values, []);

    const list = await ok(s, 'GET', '/v1/notes?limit=1');
    assert.equal(list.totalCount, 2);
    assert.equal(list.data[0].id, byKey.json().id);
    await refused(s, 'GET', '/v1/notes?title=x', undefined, 400, 'invalid_parameter');
    await refused(s, 'GET', '/v1/notes/nte_missing', undefined, 404, 'resource_not_found');
    await refused(s, 'GET', `/v1/notes/${acc.id}`, undefined, 404, 'resource_not_found');
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await assert.rejects(addField(op, { objectType: 'note', key: 'colour', label: 'Colour', valueType: 'TEXT' }), /no custom fields/);
  });

  test('notes: $contact with its inverse $note on contacts, add and remove in one operation, custom relationships, definitions', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const acc2 = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Beta' } });
    const ann = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } });
    const bob = await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Bob' } } });
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addRelationship(op, { objectType: 'note', key: 'deal', label: 'Deal', cardinality: 'has_one', targetType: 'opportunity' });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } });

    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'Call' }, relationships: { $contact: [ann.id], $account: acc.id, deal: opp.id } });
    assert.deepEqual(note.relationships.$contact, { cardinality: 'has_many', objectType: 'contact', values: [ann.id] });
    assert.deepEqual(note.relationships.deal, { cardinality: 'has_one', objectType: 'opportunity', values: [opp.id] });
    assert.deepEqual(await inverse(s, `/v1/contacts/${ann.id}`, '$note'), [note.id]);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${bob.id}`)).relationships.$note, { cardinality: 'has_many', objectType: 'note', values: [] });

    // add and remove in one operation object, on a system and on a custom relationship.
    const url = `/v1/notes/${note.id}`;
    const moved = await ok(s, 'POST', url, {
      relationships: { $contact: { add: bob.id, remove: ann.id }, $account: { add: [acc2.id], remove: [acc.id] }, deal: { remove: opp.id } },
    });
    assert.deepEqual(moved.relationships.$contact.values, [bob.id]);
    assert.deepEqual(moved.relationships.$account.values, [acc2.id]);
    assert.deepEqual(moved.relationships.deal.values, []);
    assert.deepEqual(await inverse(s, `/v1/contacts/${ann.id}`, '$note'), []);
    assert.deepEqual(await inverse(s, `/v1/contacts/${bob.id}`, '$note'), [note.id]);
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc.id}`, '$note'), []);

    // The same id in add and remove: refused, nothing changed.
    await refused(
      s,
      'POST',
      url,
      { relationships: { $contact: { add: [ann.id, bob.id], remove: bob.id } } },
      400,
      'conflicting_membership_change',
      'relationships.$contact.remove',
    );
    assert.deepEqual((await ok(s, 'GET', url)).relationships.$contact.values, [bob.id]);
    await refused(s, 'POST', url, { relationships: { $contact: { replace: [ann.id] } } }, 400, 'unknown_field', 'relationships.$contact.replace');
    await refused(s, 'POST', url, { relationships: { $contact: {} } }, 400, 'parameter_missing', 'relationships.$contact');
    await refused(s, 'POST', url, { relationships: { $note: { add: note.id } } }, 400, 'unknown_relationship');
    await refused(s, 'POST', `/v1/contacts/${ann.id}`, { relationships: { $note: { add: note.id } } }, 400, 'read_only_relationship', 'relationships.$note');
    await refused(
      s,
      'POST',
      '/v1/notes',
      { fields: { $title: 'x' }, relationships: { $contact: acc.id } },
      400,
      'relationship_entity_missing',
      'relationships.$contact',
    );

    const defs = await ok(s, 'GET', '/v1/notes/definitions');
    assert.equal(defs.objectType, 'note');
    assert.deepEqual(Object.keys(defs.fieldDefinitions), ['$title', '$content']);
    assert.deepEqual(defs.fieldDefinitions.$title.valueType, 'TEXT');
    assert.deepEqual(Object.keys(defs.relationshipDefinitions), ['$account', '$opportunity', '$createdBy', '$contact', 'deal']);
    assert.deepEqual(
      { ...defs.relationshipDefinitions.$contact, id: undefined },
      { id: undefined, label: 'Contacts', description: null, cardinality: 'HAS_MANY', objectType: 'contact' },
    );
    assert.equal(defs.relationshipDefinitions.deal.cardinality, 'HAS_ONE');
    assert.ok((await ok(s, 'GET', '/v1/contacts/definitions')).relationshipDefinitions.$note, 'contacts define their inverse $note');
    const readOnly = await seedWorkspace(ctx(), { scopes: ['notes:create'] });
    assert.equal((await api(readOnly.secret, 'GET', '/v1/notes/definitions')).statusCode, 403);
  });

  test('meetings: definitions in the shape of the others, with ids stable per workspace', async () => {
    const s = await seedWorkspace(ctx());
    const defs = await ok(s, 'GET', '/v1/meetings/definitions');
    assert.equal(defs.objectType, 'meeting');
    assert.deepEqual(Object.keys(defs.fieldDefinitions), [
      '$title',
      '$startDate',
      '$endDate',
      '$description',
      '$meetingUrl',
      '$organizerEmail',
      '$attendeeEmails',
      '$privacySetting',
    ]);
    assert.deepEqual(Object.fromEntries(Object.entries(defs.fieldDefinitions).map(([k, f]: [string, any]) => [k, f.valueType])), {
      $title: 'TEXT',
      $startDate: 'DATETIME',
      $endDate: 'DATETIME',
      $description: 'TEXT',
      $meetingUrl: 'URL',
      $organizerEmail: 'EMAIL',
      $attendeeEmails: 'EMAIL',
      $privacySetting: 'TEXT',
    });
    assert.deepEqual(defs.fieldDefinitions.$attendeeEmails.typeConfiguration, { multipleValues: true });
    assert.deepEqual(Object.fromEntries(Object.entries(defs.relationshipDefinitions).map(([k, r]: [string, any]) => [k, `${r.cardinality} ${r.objectType}`])), {
      $transcript: 'HAS_ONE file',
      $contact: 'HAS_MANY contact',
      $account: 'HAS_MANY account',
      $opportunity: 'HAS_MANY opportunity',
    });
    // The relationships defined are those a meeting carries.
    const meetings = await ok(s, 'GET', '/v1/meetings');
    assert.equal(meetings.totalCount, 0);
    assert.deepEqual(await ok(s, 'GET', '/v1/meetings/definitions'), defs, 'stable');
    const other = await seedWorkspace(ctx());
    assert.notEqual((await ok(other, 'GET', '/v1/meetings/definitions')).fieldDefinitions.$title.id, defs.fieldDefinitions.$title.id);
    const noRead = await seedWorkspace(ctx(), { scopes: ['meetings:create'] });
    assert.equal((await api(noRead.secret, 'GET', '/v1/meetings/definitions')).statusCode, 403);
  });

  test('tasks: $status one of four values, $assignedTo required, $createdBy on create only, custom relationships', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const opp = await ok(s, 'POST', '/v1/opportunities', { fields: { $name: 'Deal', $stage: 'Lead' }, relationships: { $account: acc.id } });
    const defs = await ok(s, 'GET', '/v1/tasks/definitions');
    assert.deepEqual(Object.keys(defs.fieldDefinitions), ['$title', '$status', '$description', '$dueAt']);
    assert.deepEqual(Object.keys(defs.relationshipDefinitions), ['$assignedTo', '$account', '$opportunity', '$createdBy', '$note']);

    const body = {
      fields: { $title: 'Follow up', $status: 'TODO', $dueAt: '2026-12-01T09:00:00Z' },
      relationships: { $assignedTo: s.userId, $account: acc.id },
    };
    await refused(s, 'POST', '/v1/tasks', { ...body, fields: { ...body.fields, $status: 'DONE' } }, 400, 'invalid_value', 'fields.$status');
    await refused(s, 'POST', '/v1/tasks', { ...body, fields: { ...body.fields, $status: 'todo' } }, 400, 'invalid_value', 'fields.$status');
    await refused(s, 'POST', '/v1/tasks', { fields: body.fields }, 400, 'parameter_missing');
    await refused(s, 'POST', '/v1/tasks', { ...body, relationships: { $account: acc.id } }, 400, 'parameter_missing', 'relationships.$assignedTo');
    await refused(s, 'POST', '/v1/tasks', { ...body, fields: { $title: 'x' } }, 400, 'parameter_missing', 'fields.$status');
    await refused(s, 'POST', '/v1/tasks', { ...body, relationships: { ...body.relationships, $note: [] } }, 400, 'read_only_relationship');

    const task = await ok(s, 'POST', '/v1/tasks', body);
    assert.match(task.id, /^tsk_/);
    assert.deepEqual(task.fields.$status, { value: 'TODO', valueType: 'TEXT' });
    assert.deepEqual(task.relationships.$createdBy.values, [s.userId]);
    assert.deepEqual(task.relationships.$assignedTo.values, [s.userId]);
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc.id}`, '$task'), [task.id]);
    assert.deepEqual(await inverse(s, `/v1/opportunities/${opp.id}`, '$task'), []);

    const url = `/v1/tasks/${task.id}`;
    await refused(s, 'POST', url, { fields: { $status: 'FINISHED' } }, 400, 'invalid_value', 'fields.$status');
    await refused(s, 'POST', url, { fields: { $status: null } }, 400, 'invalid_value', 'fields.$status');
    await refused(s, 'POST', url, { relationships: { $createdBy: { replace: s.userId } } }, 400, 'read_only_relationship');
    await refused(s, 'POST', url, { relationships: { $assignedTo: { replace: null } } }, 400, 'invalid_value');
    const moved = await ok(s, 'POST', url, {
      fields: { $status: 'IN_PROGRESS', $description: 'Call back' },
      relationships: { $account: { replace: null }, $opportunity: { add: opp.id } },
    });
    assert.equal(moved.fields.$status.value, 'IN_PROGRESS');
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc.id}`, '$task'), []);
    assert.deepEqual(await inverse(s, `/v1/opportunities/${opp.id}`, '$task'), [task.id]);
    assert.deepEqual(await ok(s, 'GET', url), moved);

    // The creator may be named on create; custom relationships are accepted, custom fields not.
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addRelationship(op, { objectType: 'task', key: 'contact', label: 'Contact', cardinality: 'has_one', targetType: 'contact' });
    await assert.rejects(addField(op, { objectType: 'task', key: 'priority', label: 'Priority', valueType: 'TEXT' }), /no custom fields/);
    const con = (await call(ctx(), s.secret, 'POST', '/v1/contacts', { fields: {} })).json();
    const wsKey = await keyFor(ctx(), s.workspaceId, null);
    const second = await api(wsKey, 'POST', '/v1/tasks', { ...body, relationships: { $assignedTo: s.userId, contact: con.id } });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json().relationships.$createdBy.values, []);
    assert.deepEqual(second.json().relationships.contact.values, [con.id]);
    const named = await ok(s, 'POST', '/v1/tasks', { ...body, relationships: { $assignedTo: s.userId, $createdBy: s.userId } });
    assert.deepEqual(named.relationships.$createdBy.values, [s.userId]);

    const list = await ok(s, 'GET', '/v1/tasks');
    assert.deepEqual(
      list.data.map((t: { id: string }) => t.id),
      [named.id, second.json().id, task.id],
    );
    assert.equal(list.totalCount, 3);
    await refused(s, 'GET', '/v1/tasks?status=TODO', undefined, 400, 'invalid_parameter');
  });

  test('idempotent creates of notes and tasks: one record for one key', async () => {
    const s = await seedWorkspace(ctx());
    for (const [path, body] of [
      ['/v1/notes', { fields: { $title: 'Once' } }],
      ['/v1/tasks', { fields: { $title: 'Once', $status: 'TODO' }, relationships: { $assignedTo: s.userId } }],
    ] as const) {
      const key = { 'idempotency-key': `once-${path}` };
      const all = await Promise.all(Array.from({ length: 10 }, () => call(ctx(), s.secret, 'POST', path, body, key)));
      const done = all.filter((r) => r.statusCode === 200);
      assert.ok(done.length >= 1);
      for (const r of all) assert.ok(r.statusCode === 200 || r.json().error.code === 'idempotency_conflict', r.body);
      assert.equal(new Set(done.map((r) => r.json().id)).size, 1);
      assert.equal((await ok(s, 'GET', path)).totalCount, 1);
    }
  });

  test("import kinds note and task: authors, assignees and a task's $note by externalId; inverses on accounts", async () => {
    const s = await seedWorkspace(ctx());
    const lines = [
      { object: 'user', externalId: 'u-1', email: `imp${Date.now()}@acme.test`, role: 'member' },
      { object: 'account', externalId: 'a-1', fields: { $name: { value: 'Acme' } } },
      {
        object: 'note',
        externalId: 'n-1',
        fields: { $title: { value: 'Imported', valueType: 'TEXT' } },
        relationships: { $account: { values: ['a-1'] }, $createdBy: { objectType: 'member', values: ['u-1'] } },
      },
      {
        object: 'task',
        externalId: 't-1',
        fields: { $title: { value: 'Call' }, $status: { value: 'COMPLETE' } },
        relationships: { $assignedTo: { values: ['u-1'] }, $account: { values: ['a-1'] }, $note: { values: ['n-1'] } },
      },
    ];
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    const done = await runImport(op, { kinds: importKinds(), text: lines.map((l) => JSON.stringify(l)).join('\n') });
    const [acc, note, task, user] = [done.ids.account?.['a-1'], done.ids.note?.['n-1'], done.ids.task?.['t-1'], done.ids.user?.['u-1']];
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc}`, '$note'), [note]);
    assert.deepEqual(await inverse(s, `/v1/accounts/${acc}`, '$task'), [task]);
    const got = await ok(s, 'GET', `/v1/tasks/${task}`);
    assert.deepEqual(got.relationships.$note.values, [note]);
    assert.deepEqual(got.relationships.$assignedTo.values, [user]);
    assert.equal(got.fields.$status.value, 'COMPLETE');
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$createdBy.values, [user]);
    const bad = { ...lines[3], externalId: 't-2', fields: { $title: { value: 'x' }, $status: { value: 'DONE' } } };
    await assert.rejects(runImport(op, { kinds: importKinds(), text: [lines[0], bad].map((l) => JSON.stringify(l)).join('\n') }), /\$status/);
  });

  test('a task imported without an assignee: removing an unlinked id changes nothing; emptying a set one is refused', async () => {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    const line = { object: 'task', externalId: 't-1', fields: { $title: { value: 'Call' }, $status: { value: 'TODO' } } };
    const task = (await runImport(op, { kinds: importKinds(), text: JSON.stringify(line) })).ids.task?.['t-1'] as string;
    const before = await ok(s, 'GET', `/v1/tasks/${task}`);
    const removed = await ok(s, 'POST', `/v1/tasks/${task}`, { relationships: { $assignedTo: { remove: s.userId } } });
    assert.deepEqual(removed.relationships.$assignedTo.values, []);
    assert.equal(removed.updatedAt, before.updatedAt, 'nothing changed');
    await ok(s, 'POST', `/v1/tasks/${task}`, { relationships: { $assignedTo: { add: s.userId } } });
    await refused(
      s,
      'POST',
      `/v1/tasks/${task}`,
      { relationships: { $assignedTo: { remove: s.userId } } },
      400,
      'invalid_value',
      'relationships.$assignedTo.remove',
    );
  });

  test('a relationship id given alone is bounded as one in an array: empty or over 255 characters is invalid_value', async () => {
    const s = await seedWorkspace(ctx());
    const long = 'x'.repeat(256);
    const task = (assignedTo: unknown) => ({ fields: { $title: 'x', $status: 'TODO' }, relationships: { $assignedTo: assignedTo } });
    for (const id of ['', long]) {
      await refused(s, 'POST', '/v1/tasks', task([id]), 400, 'invalid_value', 'relationships.$assignedTo[0]');
      await refused(s, 'POST', '/v1/tasks', task(id), 400, 'invalid_value', 'relationships.$assignedTo');
      await refused(s, 'POST', '/v1/notes', { fields: { $title: 'x' }, relationships: { $account: id } }, 400, 'invalid_value', 'relationships.$account');
    }
    const note = await ok(s, 'POST', '/v1/notes', { fields: { $title: 'x' } });
    const url = `/v1/notes/${note.id}`;
    await refused(s, 'POST', url, { relationships: { $account: { remove: '' } } }, 400, 'invalid_value', 'relationships.$account.remove');
    await refused(s, 'POST', url, { relationships: { $account: { add: long } } }, 400, 'invalid_value', 'relationships.$account.add');
    const t = await ok(s, 'POST', '/v1/tasks', task(s.userId));
    await refused(s, 'POST', `/v1/tasks/${t.id}`, { relationships: { $account: { replace: '' } } }, 400, 'invalid_value', 'relationships.$account.replace');
    // 255 characters are an id that names nothing, as in an array.
    await refused(s, 'POST', '/v1/tasks', task('x'.repeat(255)), 400, 'relationship_entity_missing', 'relationships.$assignedTo');
  });

  test('notes and tasks of another workspace are not found, and cannot be linked', async () => {
    const a = await seedWorkspace(ctx());
    const b = await seedWorkspace(ctx());
    const note = await ok(a, 'POST', '/v1/notes', { fields: { $title: 'Mine' } });
    const task = await ok(a, 'POST', '/v1/tasks', { fields: { $title: 'Mine', $status: 'TODO' }, relationships: { $assignedTo: a.userId } });
    await refused(b, 'GET', `/v1/notes/${note.id}`, undefined, 404, 'resource_not_found');
    await refused(b, 'GET', `/v1/tasks/${task.id}`, undefined, 404, 'resource_not_found');
    await refused(b, 'POST', `/v1/tasks/${task.id}`, { fields: { $status: 'COMPLETE' } }, 404, 'resource_not_found');
    await refused(
      b,
      'POST',
      '/v1/tasks',
      { fields: { $title: 'x', $status: 'TODO' }, relationships: { $assignedTo: a.userId } },
      400,
      'relationship_entity_missing',
    );
    assert.equal((await ok(b, 'GET', '/v1/notes')).totalCount, 0);
  });
});
