// Idempotency-Key on the two list POSTs (docs/design.md §Idempotency): byte-identical replays, 422
// on reuse with another body, keys per operation, failures not stored, and 50 concurrent identical
// creates giving exactly one list, on both databases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { openDb } from '../../src/db/database.ts';
import { call, eachDialect, headers, seedWorkspace } from '../helpers/app.ts';
import { TEST_DATABASE_URL } from '../helpers/services.ts';
import { assertError, seedRecords } from '../helpers/lists-fixtures.ts';

eachDialect('lists idempotency', (ctx) => {
  test('a create replays byte-identically with Idempotent-Replayed: true and creates nothing more', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const body = { fields: { $name: 'once', $objectType: 'contact' } };
    const first = await call(t, s.secret, 'POST', '/v1/lists', body, { 'idempotency-key': 'create-1' });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Same body, keys in another order: the same canonical fingerprint.
    const again = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $objectType: 'contact', $name: 'once' } }, { 'idempotency-key': 'create-1' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
    // Without a key every request is new.
    await call(t, s.secret, 'POST', '/v1/lists', body);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 2);
  });

  test('the same key with another body is 422 idempotency_key_reused; keys are per workspace', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const other = await seedWorkspace(t);
    await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'a', $objectType: 'contact' } }, { 'idempotency-key': 'k' });
    assertError(
      await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'b', $objectType: 'contact' } }, { 'idempotency-key': 'k' }),
      422,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
    const theirs = await call(t, other.secret, 'POST', '/v1/lists', { fields: { $name: 'b', $objectType: 'contact' } }, { 'idempotency-key': 'k' });
    assert.equal(theirs.statusCode, 200);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
  });

  test('an update replays its first response without applying it again', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a] = await seedRecords(t, s.workspaceId, 'contact', 1);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'v1', $objectType: 'contact' } })).json();
    const body = { fields: { $name: 'v2' }, relationships: { $contacts: { add: [a] } } };
    const first = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body, { 'idempotency-key': 'upd' });
    await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, { fields: { $name: 'v3' }, relationships: { $contacts: { remove: [a] } } });
    const replay = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body, { 'idempotency-key': 'upd' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    assert.equal(JSON.parse(replay.body).fields.$name.value, 'v2');
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${list.id}`)).json().fields.$name.value, 'v3');
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json().totalCount, 0);
    // Keys live per operation: the same key on createList names another, independent request.
    const created = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'v2', $objectType: 'contact' } }, { 'idempotency-key': 'upd' });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(created.headers['idempotent-replayed'], undefined);
    assert.notEqual(created.json().id, list.id);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 2);
    // Each operation still replays its own first response under that key.
    const createdAgain = await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'v2', $objectType: 'contact' } }, { 'idempotency-key': 'upd' });
    assert.equal(createdAgain.body, created.body);
    assert.equal((await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body, { 'idempotency-key': 'upd' })).body, first.body);
  });

  test('one request however its path is spelled: a percent-encoded character replays; another id or body is 422', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const body = { fields: { $name: 'spelled', $objectType: 'contact' } };
    const first = await call(t, s.secret, 'POST', '/v1/lists', body, { 'idempotency-key': 'spell' });
    assert.equal(first.statusCode, 200, first.body);
    const encoded = await call(t, s.secret, 'POST', '/v1/%6Cists', body, { 'idempotency-key': 'spell' });
    assert.equal(encoded.statusCode, 200, encoded.body);
    assert.equal(encoded.headers['idempotent-replayed'], 'true');
    assert.equal(encoded.body, first.body);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
    // The brief's own example on a record type: the spelled path replays the first answer.
    const account = { fields: { $name: 'Spelled Inc' } };
    const made = await call(t, s.secret, 'POST', '/v1/accounts', account, { 'idempotency-key': 'acct' });
    assert.equal(made.statusCode, 200, made.body);
    const again = await call(t, s.secret, 'POST', '/v1/%61ccounts', account, { 'idempotency-key': 'acct' });
    assert.equal(again.headers['idempotent-replayed'], 'true', again.body);
    assert.equal(again.body, made.body);
    // A path parameter is read decoded: an id spelled with %6C for `l` names the same list.
    const list = first.json();
    const otherList = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'other', $objectType: 'contact' } })).json();
    const update = { fields: { $name: 'renamed' } };
    const upd = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, update, { 'idempotency-key': 'upd-spell' });
    assert.equal(upd.statusCode, 200, upd.body);
    const spelledId = `/v1/lists/${list.id.replace('l', '%6C')}`;
    assert.notEqual(spelledId, `/v1/lists/${list.id}`);
    const updAgain = await call(t, s.secret, 'POST', spelledId, update, { 'idempotency-key': 'upd-spell' });
    assert.equal(updAgain.headers['idempotent-replayed'], 'true', updAgain.body);
    assert.equal(updAgain.body, upd.body);
    // Genuinely different requests under the key are still refused: another id, another body.
    assertError(
      await call(t, s.secret, 'POST', `/v1/lists/${otherList.id}`, update, { 'idempotency-key': 'upd-spell' }),
      422,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
    assertError(
      await call(t, s.secret, 'POST', spelledId, { fields: { $name: 'renamed again' } }, { 'idempotency-key': 'upd-spell' }),
      422,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
    assertError(
      await call(t, s.secret, 'POST', '/v1/%6Cists', { fields: { $name: 'another', $objectType: 'contact' } }, { 'idempotency-key': 'spell' }),
      422,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${otherList.id}`)).json().fields.$name.value, 'other');
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 2);
  });

  test('a query string that holds no parameter (`?`, `?&`) is no query: the path without it replays', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const body = { fields: { $name: 'bare', $objectType: 'contact' } };
    // Over a socket, so that a bare `?` reaches the server as sent (an injected request drops it).
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const post = async (path: string, key: string) => {
      const init = {
        method: 'POST',
        headers: { ...headers(s.secret), 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      };
      const res = await fetch(`${url}${path}`, init);
      return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.text() };
    };
    for (const [i, [a, b]] of [
      ['/v1/lists?', '/v1/lists'],
      ['/v1/lists', '/v1/lists?'],
      ['/v1/lists?&', '/v1/lists'],
      ['/v1/lists', '/v1/lists?&&'],
    ].entries()) {
      const first = await post(a!, `bare-${i}`);
      assert.equal(first.status, 200, first.body);
      const again = await post(b!, `bare-${i}`);
      assert.deepEqual([again.status, again.replayed], [200, 'true'], `${a} then ${b}: ${again.body}`);
      assert.equal(again.body, first.body);
    }
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 4);
  });

  test('a refused update (400 from the handler) stores nothing: retried with the same key once fixed, it runs and succeeds', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const list = (await call(t, s.secret, 'POST', '/v1/lists', { fields: { $name: 'v1', $objectType: 'contact' } })).json();
    // An id that will exist once the contact is imported under it.
    const [a] = await seedRecords(t, s.workspaceId, 'contact', 1);
    const other = await seedWorkspace(t);
    const [elsewhere] = await seedRecords(t, other.workspaceId, 'contact', 1);
    const body = { relationships: { $contacts: { add: [a] } }, fields: { $name: 'fixed' } };
    const missing = { relationships: { $contacts: { add: [elsewhere] } }, fields: { $name: 'fixed' } };
    const first = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, missing, { 'idempotency-key': 'bad' });
    assertError(first, 400, 'relationship_entity_missing');
    const again = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, missing, { 'idempotency-key': 'bad' });
    assertError(again, 400, 'relationship_entity_missing');
    assert.equal(again.headers['idempotent-replayed'], undefined, 'judged again, not replayed');
    // The client fixes the request and retries under the same key: nothing was stored, so it is
    // a new request under a free key, and it succeeds.
    const fixed = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body, { 'idempotency-key': 'bad' });
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal(fixed.json().fields.$name.value, 'fixed');
    assert.equal((await call(t, s.secret, 'GET', `/v1/lists/${list.id}/contacts`)).json().totalCount, 1);
    const replay = await call(t, s.secret, 'POST', `/v1/lists/${list.id}`, body, { 'idempotency-key': 'bad' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, fixed.body);
  });

  test('50 concurrent identical creates make exactly one list; the others replay it or get 409', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const [a, b] = await seedRecords(t, s.workspaceId, 'contact', 2);
    const body = { fields: { $name: 'race', $objectType: 'contact' }, relationships: { $contacts: [a, b] } };
    const results = await Promise.all(Array.from({ length: 50 }, () => call(t, s.secret, 'POST', '/v1/lists', body, { 'idempotency-key': 'race-1' })));
    const ok = results.filter((r) => r.statusCode === 200);
    const conflicts = results.filter((r) => r.statusCode === 409);
    assert.equal(ok.length + conflicts.length, 50, results.map((r) => r.statusCode).join(','));
    assert.ok(ok.length >= 1);
    assert.equal(new Set(ok.map((r) => r.json().id)).size, 1);
    assert.equal(ok.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1);
    for (const c of conflicts) {
      assert.equal(c.json().error.code, 'idempotency_conflict');
      assert.equal(c.headers['retry-after'], '1');
    }
    const rows = await t.deps.db.kysely.selectFrom('lists').select(['id', 'member_count']).where('workspace_id', '=', s.workspaceId).execute();
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0]?.member_count), 2);
    assert.equal((await call(t, s.secret, 'GET', '/v1/lists')).json().totalCount, 1);
    const after = await call(t, s.secret, 'POST', '/v1/lists', body, { 'idempotency-key': 'race-1' });
    assert.equal(after.headers['idempotent-replayed'], 'true');
    assert.equal(after.json().id, ok[0]?.json().id);
  });

  test('two server instances on one database: 50 concurrent creates split between them make one list', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    // A second app with its own connection (pool) to the same database stands for another process.
    const db2 = t.tdb.sqliteFile
      ? openDb({ dataDir: t.tdb.dataDir, sqliteFile: t.tdb.sqliteFile })
      : openDb({ dataDir: t.tdb.dataDir, databaseUrl: TEST_DATABASE_URL, ...(t.tdb.schema ? { schema: t.tdb.schema } : {}) });
    const app2 = await buildApp(t.config, { db: db2, logger: t.deps.logger, auth: new Authenticator(db2), blobs: t.deps.blobs });
    try {
      const payload = JSON.stringify({ fields: { $name: 'two instances', $objectType: 'account' } });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? app2 : t.app).inject({
            method: 'POST',
            url: '/v1/lists',
            headers: headers(s.secret, { 'content-type': 'application/json', 'idempotency-key': 'multi' }),
            payload,
          }),
        ),
      );
      const ok = results.filter((r) => r.statusCode === 200);
      assert.ok(
        results.every((r) => r.statusCode === 200 || r.statusCode === 409),
        results.map((r) => r.statusCode).join(','),
      );
      assert.equal(new Set(ok.map((r) => r.json().id)).size, 1);
      assert.equal(ok.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1);
      const n = await t.deps.db.kysely
        .selectFrom('lists')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', '=', s.workspaceId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(n.n), 1);
    } finally {
      await app2.close();
      await db2.close();
    }
  });
});
