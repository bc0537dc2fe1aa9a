// A restore's statements of the trash entry and the rows it holds are built and compiled once
// (docs/performance.md §Writes compiled once): after the first restore, none of them is compiled
// again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { write } from '../../src/db/write.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { restore } from '../../src/trash/restore.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { compiledDuring } from '../helpers/compiles.ts';

eachDialect('restore compiles', (ctx) => {
  test('a restore after the first: no statement of the trash tables compiled again', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const account = (await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).json().id as string;
    const trashed: string[] = [];
    for (const lastName of ['One', 'Two']) {
      const created = await call(t, s.secret, 'POST', '/v1/contacts', {
        fields: { $name: { firstName: 'C', lastName }, $email: [`${lastName}@contact.test`] },
        relationships: { $account: [account] },
      });
      assert.equal(created.statusCode, 200, created.body);
      const id = created.json().id as string;
      assert.equal((await call(t, s.secret, 'DELETE', `/v1/contacts/${id}`)).statusCode, 200);
      trashed.push(id);
    }
    const back = (id: string) => write(t.deps.db.kysely, (tx) => restore(operatorCtx(tx, s.workspaceId), { id }));
    await back(trashed[0]!);
    const { compiled } = await compiledDuring(() => back(trashed[1]!));
    assert.deepEqual(
      compiled.filter((q) => /"trash(_links|_members)?"/.test(q)),
      [],
      compiled.join('\n'),
    );
    const got = await call(t, s.secret, 'GET', `/v1/contacts/${trashed[1]}`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(got.json().relationships.$account.values, [account]);
  });
});
