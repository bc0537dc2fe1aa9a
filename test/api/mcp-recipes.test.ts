// An agent's recipes over the MCP endpoint (docs/mcp.md): the loop of finding an operation, reading
// its details, then calling it, as an agent written for the original's hosted server runs it with
// the tools' names changed (docs/mcp.md §Beside the original's hosted server). What the agent
// learns from the documentation tools is what it may send: a listing's filters and its optional
// page parameters are in get_api_details, and the calls built from them succeed.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { eachDialect, seedWorkspace, type Seeded } from '../helpers/app.ts';
import { callTool } from '../helpers/mcp.ts';

eachDialect('mcp recipes', (ctx) => {
  let s: Seeded;
  before(async () => {
    const t = ctx();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await seedWorkspace(t);
  });
  /** The tool's answer, asserting it is no tool error. */
  const ok = async (name: string, args: unknown) => {
    const r = await callTool(ctx(), s.secret, name, args);
    assert.equal(r.isError, false, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r.body)}`);
    return r.body;
  };

  test("a filterable listing's details say that it takes filters and how they are written", async () => {
    for (const operationId of ['listAccounts', 'listContacts', 'listOpportunities', 'listTasks', 'listNotes', 'listObjectRecords']) {
      const d = await ok('get_api_details', { operationId });
      // The syntax, the keys it takes and the operators: enough to write `$email[contains]=…`.
      for (const part of ['<key>[<operator>]=<value>', '/definitions', '$<type>-<type>', '[-equal]', 'contains', 'startsWith', 'greaterThanOrEqual'])
        assert.ok(String(d.description).includes(part), `${operationId}: "${part}" in ${d.description}`);
    }
    // A listing without filters says nothing of them.
    assert.ok(!String((await ok('get_api_details', { operationId: 'listMembers' })).description).includes('[<operator>]'));
  });

  test('the page parameters are optional in the details, as a listing takes no limit or offset', async () => {
    const d = await ok('get_api_details', { operationId: 'listContacts' });
    for (const name of ['limit', 'offset']) {
      const p = d.parameters.find((x: any) => x.in === 'query' && x.name === name);
      assert.ok(p, name);
      assert.notEqual(p.required, true, `${name} is not required`);
    }
    assert.equal((await ok('read_from_rolodex', { path: '/v1/contacts' })).object, 'list');
  });

  test('find or create a contact, file a task and a note on its account, add the account to a list', async () => {
    const me = await ok('get_current_user', {});
    const account = await ok('write_to_rolodex', { path: '/v1/accounts', body: { fields: { $name: 'Acme Corp' } } });
    // Find the account by name, the filter written in the path as the recipe writes it, or as `query`.
    for (const args of [{ path: '/v1/accounts?$name[equal]=Acme%20Corp&limit=5' }, { path: '/v1/accounts', query: { '$name[equal]': 'Acme Corp', limit: 5 } }])
      assert.deepEqual(
        (await ok('read_from_rolodex', args)).data.map((r: any) => r.id),
        [account.id],
      );
    // Search before create: nothing yet, so create; the second search finds it.
    const byEmail = '/v1/contacts?$email[contains]=alex@customer.com';
    assert.equal((await ok('read_from_rolodex', { path: byEmail })).totalCount, 0);
    const contact = await ok('write_to_rolodex', {
      path: '/v1/contacts',
      body: { fields: { $name: { firstName: 'Alex', lastName: 'Rivera' }, $email: ['alex@customer.com'] }, relationships: { $account: [account.id] } },
      idempotencyKey: 'import-1-row-1',
    });
    assert.deepEqual(
      (await ok('read_from_rolodex', { path: byEmail })).data.map((r: any) => r.id),
      [contact.id],
    );
    assert.deepEqual(
      (await ok('read_from_rolodex', { path: `/v1/contacts?$account-contact[contains]=${account.id}&limit=25` })).data.map((r: any) => r.id),
      [contact.id],
    );
    // A task for "me" on the account, found again by the account's slug and by the assignee.
    const defs = await ok('read_from_rolodex', { path: '/v1/tasks/definitions' });
    assert.ok(defs.fieldDefinitions.$title && defs.relationshipDefinitions.$assignedTo);
    const task = await ok('write_to_rolodex', {
      path: '/v1/tasks',
      body: {
        fields: { $title: 'Send renewal proposal', $dueAt: '2026-10-01T17:00:00+00:00', $status: 'TODO' },
        relationships: { $account: [account.id], $assignedTo: [me.id] },
      },
    });
    for (const path of [
      `/v1/tasks?$task-account[contains]=${account.id}&$status[equal]=TODO&limit=25`,
      `/v1/tasks?$assignedTo[contains]=${me.id}&$status[equal]=TODO`,
    ])
      assert.deepEqual(
        (await ok('read_from_rolodex', { path })).data.map((r: any) => r.id),
        [task.id],
        path,
      );
    // A guessed field is refused with the key to fix, and the definitions' key then works.
    const guessed = await callTool(ctx(), s.secret, 'write_to_rolodex', { path: '/v1/notes', body: { fields: { $title: 'Recap', $body: '# Recap' } } });
    assert.equal(guessed.isError, true);
    assert.equal(guessed.body.error.code, 'unknown_field');
    assert.equal(guessed.body.error.param, 'fields.$body');
    const note = await ok('write_to_rolodex', {
      path: '/v1/notes',
      body: { fields: { $title: 'Recap', $content: '# Recap' }, relationships: { $account: [account.id] } },
    });
    assert.deepEqual(
      (await ok('read_from_rolodex', { path: `/v1/notes?$account[contains]=${account.id}&limit=10` })).data.map((r: any) => r.id),
      [note.id],
    );
    const list = await ok('write_to_rolodex', { path: '/v1/lists', body: { fields: { $name: 'Targets', $objectType: 'account' } } });
    await ok('write_to_rolodex', { path: `/v1/lists/${list.id}`, body: { relationships: { $accounts: { add: [account.id] } } } });
    assert.deepEqual(
      (await ok('read_from_rolodex', { path: `/v1/lists/${list.id}/accounts?limit=25` })).data.map((r: any) => r.id),
      [account.id],
    );
  });
});
