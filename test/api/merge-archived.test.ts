// A merge of records holding values of an archived unique field (docs/merge.md §Fields), on both
// databases, one write after the other: the primary keeps its own value, else takes the
// duplicate's, and after `unarchive` the primary is found by the value it kept, which stays unique;
// a value the duplicate held and the primary did not keep is free, as the merged duplicate never
// comes back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { write } from '../../src/db/index.ts';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { setArchived } from '../../src/records/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace } from '../helpers/app.ts';

eachDialect('merge of records holding an archived field', (ctx) => {
  async function setUp(): Promise<{ s: Seeded; archive: (archived: boolean) => Promise<unknown> }> {
    const s = await seedWorkspace(ctx());
    const op = operatorCtx(ctx().deps.db.kysely, s.workspaceId);
    await addField(op, { objectType: 'account', key: 'code', label: 'code', valueType: 'TEXT', unique: true });
    const archive = (archived: boolean) =>
      write(ctx().deps.db.kysely, (tx) => setArchived({ ...operatorCtx(tx, s.workspaceId), db: tx }, { objectType: 'account', key: 'code', archived }));
    return { s, archive };
  }
  const account = async (s: Seeded, fields: Record<string, unknown>) => {
    const res = await call(ctx(), s.secret, 'POST', '/v1/accounts', { fields });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ id: string }>();
  };
  const merged = async (s: Seeded, primaryId: string, duplicateId: string) => {
    const res = await call(ctx(), s.secret, 'POST', '/v1/accounts/merge', { primaryId, duplicateId });
    assert.equal(res.statusCode, 200, res.body);
  };
  const found = async (s: Seeded, code: string) =>
    ((await call(ctx(), s.secret, 'GET', `/v1/accounts?code=${code}`)).json().data as { id: string }[]).map((r) => r.id);
  const createStatus = async (s: Seeded, code: string) => (await call(ctx(), s.secret, 'POST', '/v1/accounts', { fields: { $name: 'N', code } })).statusCode;

  test('a primary without the value takes the duplicate one: found by it after unarchive, and it stays unique', async () => {
    const { s, archive } = await setUp();
    const p = await account(s, { $name: 'P' });
    const d = await account(s, { $name: 'D', code: 'd-1' });
    await archive(true);
    await merged(s, p.id, d.id);
    await archive(false);
    assert.deepEqual(await found(s, 'd-1'), [p.id]);
    assert.equal(await createStatus(s, 'D-1'), 409);
  });

  test('a primary with its own value keeps it: found by it after unarchive; the duplicate one is free', async () => {
    const { s, archive } = await setUp();
    const p = await account(s, { $name: 'P', code: 'p-1' });
    const d = await account(s, { $name: 'D', code: 'd-1' });
    await archive(true);
    await merged(s, p.id, d.id);
    await archive(false);
    assert.deepEqual({ p: await found(s, 'p-1'), d: await found(s, 'd-1') }, { p: [p.id], d: [] });
    assert.equal(await createStatus(s, 'P-1'), 409);
    assert.equal(await createStatus(s, 'D-1'), 200);
  });

  test('a merge while the field is shown, then archive and unarchive: the primary is found by the value it took', async () => {
    const { s, archive } = await setUp();
    const p = await account(s, { $name: 'P' });
    const d = await account(s, { $name: 'D', code: 'd-1' });
    await merged(s, p.id, d.id);
    await archive(true);
    assert.equal((await call(ctx(), s.secret, 'GET', '/v1/accounts?code=d-1')).json().error?.code, 'invalid_parameter');
    await archive(false);
    assert.deepEqual(await found(s, 'd-1'), [p.id]);
    assert.equal(await createStatus(s, 'D-1'), 409);
  });
});
