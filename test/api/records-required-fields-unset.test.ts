// A required field an import left unset (a task without `$title` or `$status`, an account without
// `$name`: docs/import.md does not insist on them) takes `null` on update and changes nothing: no
// updatedAt move, no event, no history row, so a client may send such a record's fields back as
// the API shows them. Once set, `null` is refused as before (docs/records.md §Writing fields); a
// merge's `{"value": null}` follows the primary's stored fields (docs/merge.md §Fields), and an
// import line's `null` is taken as its absence is. On both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

type Fields = Record<string, { value: unknown }>;

eachDialect('required fields left unset by an import', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url} ${JSON.stringify(body)}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, param: string, code = 'invalid_value') {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}: ${res.body}`);
    const { error } = res.json();
    assert.deepEqual([error.code, error.param], [code, param], `${url} ${JSON.stringify(body)}`);
    return error.message as string;
  }
  async function imported(s: Seeded, lines: object[]) {
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    return (await runImport(op, { kinds: importKinds(), text: lines.map((l) => JSON.stringify(l)).join('\n') })).ids;
  }
  async function eventTypes(s: Seeded): Promise<string[]> {
    const rows = await ctx().deps.db.kysely.selectFrom('events').select('body').where('workspace_id', '=', s.workspaceId).orderBy('seq').execute();
    return rows.map((r) => (JSON.parse(r.body) as { type: string }).type);
  }
  const plain = (fields: Fields) => Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.value]));

  test('a task imported without $title and $status: its fields sent back change nothing; a set $title is not cleared', async () => {
    const s = await seedWorkspace(ctx());
    const ids = await imported(s, [{ object: 'task', externalId: 't-1', fields: { $description: { value: 'Call back' } } }]);
    const url = `/v1/tasks/${ids.task?.['t-1']}`;
    const before = await ok(s, 'GET', url);
    assert.deepEqual([before.fields.$title.value, before.fields.$status.value], [null, null]);
    const events = await eventTypes(s);
    // Every field as the API shows it, as a client sending the record back writes it.
    assert.deepEqual(await ok(s, 'POST', url, { fields: plain(before.fields) }), before);
    assert.deepEqual(await ok(s, 'POST', url, { fields: { $title: null, $status: null } }), before);
    assert.deepEqual(await eventTypes(s), events, 'no event');

    // Alongside a change of another field, which is written; the unset ones stay unset.
    const changed = await ok(s, 'POST', url, { fields: { $title: null, $status: null, $description: 'Write' } });
    assert.deepEqual(plain(changed.fields), { ...plain(before.fields), $description: 'Write' });
    assert.deepEqual((await eventTypes(s)).slice(events.length), ['task.updated']);

    // Once set, `null` clears it no more, and the write changes nothing else; the unset $status
    // still takes it.
    const set = await ok(s, 'POST', url, { fields: { $title: 'Call' } });
    const message = await refused(s, url, { fields: { $status: null, $description: 'Lost', $title: null } }, 'fields.$title');
    assert.equal(message, '"$title" is required and cannot be cleared.');
    assert.deepEqual(await ok(s, 'POST', url, { fields: { $status: null } }), set);
    assert.deepEqual(await ok(s, 'GET', url), set);
  });

  test('an account imported without $name: $name null changes nothing, not even its history; one created through the API refuses it', async () => {
    const s = await seedWorkspace(ctx());
    const ids = await imported(s, [{ object: 'account', externalId: 'a-1', fields: { $website: { value: ['https://acme.test'] } } }]);
    const url = `/v1/accounts/${ids.account?.['a-1']}`;
    const before = await ok(s, 'GET', url);
    const history = await ok(s, 'GET', `${url}/fields/$name/history`);
    const events = await eventTypes(s);
    assert.deepEqual(await ok(s, 'POST', url, { fields: { $name: null, $website: before.fields.$website.value } }), before);
    assert.deepEqual(await ok(s, 'GET', `${url}/fields/$name/history`), history);
    assert.deepEqual(await eventTypes(s), events);

    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    await refused(s, `/v1/accounts/${acc.id}`, { fields: { $name: null, $website: 'https://ads.test' } }, 'fields.$name');
    assert.deepEqual(await ok(s, 'GET', `/v1/accounts/${acc.id}`), acc);
    // A create still needs it, null or absent.
    await refused(s, '/v1/accounts', { fields: { $name: null } }, 'fields.$name', 'parameter_missing');
    await refused(
      s,
      '/v1/tasks',
      { fields: { $title: 'Call', $status: null }, relationships: { $assignedTo: s.userId } },
      'fields.$status',
      'parameter_missing',
    );
  });

  test('an opportunity imported without $stage: null changes nothing until a stage is set', async () => {
    const s = await seedWorkspace(ctx());
    const ids = await imported(s, [{ object: 'opportunity', externalId: 'o-1', fields: { $name: { value: 'Deal' } } }]);
    const url = `/v1/opportunities/${ids.opportunity?.['o-1']}`;
    const before = await ok(s, 'GET', url);
    assert.deepEqual(await ok(s, 'POST', url, { fields: { $stage: null } }), before);
    await refused(s, url, { fields: { $name: null } }, 'fields.$name');
    await ok(s, 'POST', url, { fields: { $stage: 'Lead' } });
    await refused(s, url, { fields: { $stage: null } }, 'fields.$stage');
  });

  test('a merge: {"value": null} for $name is taken while the primary holds none, refused once it holds one', async () => {
    const s = await seedWorkspace(ctx());
    const ids = await imported(s, [
      { object: 'account', externalId: 'p', fields: { $accountStatus: { value: 'p' } } },
      { object: 'account', externalId: 'd', fields: { $accountStatus: { value: 'd' } } },
      { object: 'account', externalId: 'named', fields: { $name: { value: 'Named' } } },
      { object: 'account', externalId: 'd2', fields: { $name: { value: 'Other' } } },
    ]);
    const id = (x: string) => ids.account?.[x] as string;
    const resolutions = { $name: { value: null } };
    const merged = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: id('p'), duplicateId: id('d'), fieldResolutions: resolutions });
    assert.deepEqual([merged.primary.fields.$name.value, merged.primary.fields.$accountStatus.value], [null, 'p']);

    const body = { primaryId: id('named'), duplicateId: id('d2'), fieldResolutions: resolutions };
    assert.equal(await refused(s, '/v1/accounts/merge', body, 'fieldResolutions.$name'), '"$name" is required and cannot be cleared.');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${id('d2')}`)).id, id('d2'), 'nothing merged');

    // "duplicate" takes the duplicate's none: the same refusal while the primary holds one.
    const fromNone = { primaryId: id('named'), duplicateId: id('p'), fieldResolutions: { $name: 'duplicate' } };
    const message = await refused(s, '/v1/accounts/merge', fromNone, 'fieldResolutions.$name');
    assert.equal(message, '"$name" is required and cannot be cleared: the duplicate holds none.');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${id('named')}`)).fields.$name.value, 'Named', 'nothing merged');
    const fromSome = await ok(s, 'POST', '/v1/accounts/merge', { primaryId: id('named'), duplicateId: id('d2'), fieldResolutions: { $name: 'duplicate' } });
    assert.equal(fromSome.primary.fields.$name.value, 'Other');
  });

  test('an import line with null for a required field imports the record without it, as leaving it out does', async () => {
    const s = await seedWorkspace(ctx());
    const line = (title: unknown) => ({ object: 'task', externalId: 't-1', fields: { $title: { value: title }, $status: { value: null, valueType: 'TEXT' } } });
    const ids = await imported(s, [line('Call')]);
    const url = `/v1/tasks/${ids.task?.['t-1']}`;
    assert.deepEqual(plain((await ok(s, 'GET', url)).fields).$title, 'Call');
    await imported(s, [line(null)]);
    const after = await ok(s, 'GET', url);
    assert.deepEqual([after.fields.$title.value, after.fields.$status.value], [null, null]);
  });
});
