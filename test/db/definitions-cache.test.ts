// A running server caches each workspace's definitions (docs/records.md §Definitions). Whatever
// changes them outside the server — the CLI, an import, plain SQL on another connection (a
// migration, an operator) — is seen by its next request, and a change rolled back never is.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addField } from '../../src/definitions/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, seedWorkspace } from '../helpers/app.ts';
import { elsewhere, rolodex } from '../helpers/outside.ts';
import { statementsOf } from '../helpers/sql-spy.ts';
import { write } from '../../src/db/write.ts';

eachDialect('definitions seen by a running server', (t) => {
  test('a field or relationship added, changed or removed outside the server shows in its next request', async () => {
    const s = await seedWorkspace(t());
    const ws = s.workspaceId;
    const created = await call(t(), s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann', lastName: 'Lee' } } });
    assert.equal(created.statusCode, 200, created.body);
    const id = created.json().id as string;
    const read = async () => {
      const r = await call(t(), s.secret, 'GET', `/v1/contacts/${id}`);
      assert.equal(r.statusCode, 200, r.body);
      return r.json();
    };
    // Read twice, so that the definitions are cached.
    assert.equal((await read()).fields.tier, undefined);
    assert.equal((await read()).fields.tier, undefined);

    await rolodex(t(), 'definition', 'add', '--workspace', ws, '--type', 'contact', '--key', 'tier', '--label', 'Tier', '--value-type', 'TEXT');
    assert.deepEqual((await read()).fields.tier, { value: null, valueType: 'TEXT' });
    const written = await call(t(), s.secret, 'POST', `/v1/contacts/${id}`, { fields: { tier: 'gold' } });
    assert.equal(written.statusCode, 200, written.body);
    assert.equal((await read()).fields.tier.value, 'gold');

    const file = join(t().tdb.dataDir, 'definitions.ndjson');
    writeFileSync(
      file,
      JSON.stringify({
        object: 'definition',
        externalId: 'd-partner',
        definition: 'relationship',
        objectType: 'contact',
        key: 'partner',
        label: 'Partner',
        cardinality: 'has_one',
        targetType: 'account',
      }) + '\n',
    );
    await rolodex(t(), 'import', '--workspace', ws, file);
    assert.deepEqual((await read()).relationships.partner, { cardinality: 'has_one', objectType: 'account', values: [] });

    const labelOf = async () => {
      const r = await call(t(), s.secret, 'GET', '/v1/contacts/definitions');
      assert.equal(r.statusCode, 200, r.body);
      return r.json().fieldDefinitions.tier?.label as string | undefined;
    };
    assert.equal(await labelOf(), 'Tier');
    await elsewhere(t(), `update field_definitions set label = 'Level' where workspace_id = '${ws}' and key = 'tier'`);
    assert.equal(await labelOf(), 'Level');
    await elsewhere(t(), `delete from field_definitions where workspace_id = '${ws}' and key = 'tier'`);
    assert.equal((await read()).fields.tier, undefined);
  });

  test('creates alone fill the cache: a stream of creates does not read the definitions every time', async () => {
    const s = await seedWorkspace(t());
    const create = (name: string) => call(t(), s.secret, 'POST', '/v1/contacts', { fields: { $name: { firstName: name, lastName: 'Lee' } } });
    assert.equal((await create('Ann')).statusCode, 200);
    const { result, statements } = await statementsOf(() => create('Bo'));
    assert.equal(result.statusCode, 200, result.body);
    assert.deepEqual(
      statements.filter((x) => /field_definitions/.test(x)),
      [],
    );
  });

  test('a definition written in a transaction that rolls back is never seen', async () => {
    const s = await seedWorkspace(t());
    const created = await call(t(), s.secret, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const id = created.json().id as string;
    assert.equal((await call(t(), s.secret, 'GET', `/v1/accounts/${id}`)).json().fields.arr, undefined);
    await assert.rejects(
      write(t().deps.db.kysely, async (tx) => {
        // addField reads the definitions back inside the transaction, with the new field.
        const field = await addField(operatorCtx(tx, s.workspaceId), { objectType: 'account', key: 'arr', label: 'ARR', valueType: 'NUMBER' });
        assert.equal(field.key, 'arr');
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    // One change committed elsewhere brings the workspace to the version the rolled-back
    // transaction had reached: what was built inside that transaction must not be shown then.
    await elsewhere(
      t(),
      `insert into field_definitions (id, workspace_id, object_type, key, label, description, value_type, config, created_at, position)
       values ('fld_seats', '${s.workspaceId}', 'account', 'seats', 'Seats', null, 'NUMBER', '{}', '2026-01-01T00:00:00.000Z', 1)`,
    );
    const later = (await call(t(), s.secret, 'GET', `/v1/accounts/${id}`)).json();
    assert.equal(later.fields.arr, undefined);
    assert.deepEqual(later.fields.seats, { value: null, valueType: 'NUMBER' });
  });
});
