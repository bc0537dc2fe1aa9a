// A required relationship an import left empty (a task without `$assignedTo`, an opportunity
// without `$account`: docs/import.md does not insist on them) takes every operation that leaves it
// empty, `remove` and `replace` with `[]` or `null` alike, and changes nothing; once set, none of
// them empties it (docs/records.md §Writing relationships), on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('required relationships left unset by an import', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url} ${JSON.stringify(body)}: ${res.body}`);
    return res.json();
  }
  async function refused(s: Seeded, url: string, body: unknown, param: string) {
    const res = await call(ctx(), s.secret, 'POST', url, body);
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}: ${res.body}`);
    assert.deepEqual([res.json().error.code, res.json().error.param], ['invalid_value', param], `${url} ${JSON.stringify(body)}`);
  }
  async function imported(s: Seeded, lines: object[]) {
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    return (await runImport(op, { kinds: importKinds(), text: lines.map((l) => JSON.stringify(l)).join('\n') })).ids;
  }
  const assigned = (r: { relationships: Record<string, { values: string[] }> }, key: string) => r.relationships[key]!.values;

  test('a task imported without an assignee: replace [] or null on $assignedTo changes nothing; emptying a set one is refused', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const ids = await imported(s, [{ object: 'task', externalId: 't-1', fields: { $title: { value: 'Call' }, $status: { value: 'TODO' } } }]);
    const url = `/v1/tasks/${ids.task?.['t-1']}`;
    const before = await ok(s, 'GET', url);
    assert.deepEqual(assigned(before, '$assignedTo'), []);
    for (const empty of [[], null]) {
      // Every writable relationship as it stands, as a client sending the record back writes it.
      const body = { relationships: { $assignedTo: { replace: empty }, $account: { replace: empty }, $opportunity: { replace: empty } } };
      assert.deepEqual(await ok(s, 'POST', url, body), before, `${JSON.stringify(empty)}: nothing changed`);
    }
    // Alongside a change of another relationship, which is written.
    const linked = await ok(s, 'POST', url, { relationships: { $assignedTo: { replace: [] }, $account: { replace: acc.id } } });
    assert.deepEqual([assigned(linked, '$assignedTo'), assigned(linked, '$account')], [[], [acc.id]]);

    // Once assigned, neither operation empties it, and the write changes nothing else.
    const set = await ok(s, 'POST', url, { relationships: { $assignedTo: { replace: s.userId } } });
    for (const empty of [[], null])
      await refused(s, url, { relationships: { $account: { replace: null }, $assignedTo: { replace: empty } } }, 'relationships.$assignedTo.replace');
    await refused(s, url, { relationships: { $assignedTo: { remove: s.userId } } }, 'relationships.$assignedTo.remove');
    assert.deepEqual(await ok(s, 'GET', url), set);
  });

  test('a task created through the API: replace [] or null on $assignedTo is refused, as on an assigned imported task', async () => {
    const s = await seedWorkspace(ctx());
    const task = await ok(s, 'POST', '/v1/tasks', { fields: { $title: 'Call', $status: 'TODO' }, relationships: { $assignedTo: s.userId } });
    const url = `/v1/tasks/${task.id}`;
    for (const empty of [[], null]) await refused(s, url, { relationships: { $assignedTo: { replace: empty } } }, 'relationships.$assignedTo.replace');
    assert.deepEqual(await ok(s, 'POST', url, { relationships: { $account: { replace: [] }, $opportunity: { replace: null } } }), task);
  });

  test('an opportunity imported without its account: replace [] or null on $account changes nothing until it is set', async () => {
    const s = await seedWorkspace(ctx());
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const ids = await imported(s, [{ object: 'opportunity', externalId: 'o-1', fields: { $name: { value: 'Deal' }, $stage: { value: 'Lead' } } }]);
    const url = `/v1/opportunities/${ids.opportunity?.['o-1']}`;
    const before = await ok(s, 'GET', url);
    for (const empty of [[], null]) assert.deepEqual(await ok(s, 'POST', url, { relationships: { $account: { replace: empty } } }), before);
    await ok(s, 'POST', url, { relationships: { $account: { add: acc.id } } });
    for (const empty of [[], null]) await refused(s, url, { relationships: { $account: { replace: empty } } }, 'relationships.$account.replace');
    assert.deepEqual(assigned(await ok(s, 'GET', url), '$account'), [acc.id]);
  });
});
