// The operator's side of the trash (docs/trash.md) on both databases: `rolodex trash list`,
// `restore` (refused when a unique value is taken, naming the field), `purge` as erasure (a canary
// value planted in a record, its update, its stored idempotent answers, its links and memberships
// is found nowhere afterwards: not in the SQLite file and its log, not in any PostgreSQL table of
// the schema), only what names the id as written (not a look-alike), a retry under the key of an
// erased answer refused rather than run again, the refusal of an unknown workspace or type, and
// the sweeper's TRASH_RETENTION_DAYS.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { addField } from '../../src/definitions/service.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { filesEnv } from '../../src/files/service.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { tableNames } from '../helpers/canary.ts';
import { rolodex as cli } from '../helpers/cli.ts';

/** Where the canary still is: SQLite files (database and log), or PostgreSQL tables of the schema. */
async function foundIn(t: TestApp, canary: string): Promise<string[]> {
  if (!t.tdb.schema) {
    const files = ['rolodex.db', 'rolodex.db-wal'].map((f) => join(t.tdb.dataDir, f)).filter((f) => existsSync(f));
    assert.ok(files.length > 0);
    return files.filter((f) => readFileSync(f).includes(canary));
  }
  // Every table in one statement, one round trip: each table's rows whose text holds the canary.
  const pattern = `%${canary}%`;
  const counts = (await tableNames(t)).map(
    (name) => sql`select ${sql.lit(name)} as name, count(*) as n from ${sql.table(name)} as x where x::text like ${pattern}`,
  );
  const { rows } = await sql<{ name: string; n: number | string }>`${sql.join(counts, sql` union all `)}`.execute(t.deps.db.kysely);
  return rows
    .filter((r) => Number(r.n) > 0)
    .map((r) => r.name)
    .sort();
}

eachDialect('trash, operator side', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, extra: Record<string, string> = {}) {
    const res = await call(ctx(), s.secret, method, url, body, extra);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }

  test('purge erases a canary value from every table, index and log', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const canary = `zqcanary${randomBytes(6).toString('hex')}`;
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'contact', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    const acc = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } });
    const con = await ok(
      s,
      'POST',
      '/v1/contacts',
      { fields: { $name: { firstName: canary }, $email: [`${canary}@x.test`], code: canary }, relationships: { $account: acc.id } },
      { 'idempotency-key': 'create-canary' },
    );
    await ok(s, 'POST', `/v1/contacts/${con.id}`, { fields: { code: `${canary}2` } }, { 'idempotency-key': 'update-canary' });
    const list = await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [con.id] } });
    await ok(s, 'DELETE', `/v1/contacts/${con.id}`, undefined, { 'idempotency-key': 'delete-canary' });
    assert.ok((await foundIn(t, canary)).length > 0, 'the canary is there before the purge');

    const listed = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--type', 'contact', '--json']);
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(
      JSON.parse(listed.out).map((i: { id: string }) => i.id),
      [con.id],
    );
    const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, con.id, '--json']);
    assert.equal(purged.code, 0, purged.err);
    assert.deepEqual(JSON.parse(purged.out), {
      records: 1,
      values: 3,
      valueIndexRows: 3,
      relationships: 1,
      listMemberships: 1,
      storedResponses: 3,
      // created, updated, the list's members_added, deleted, the list's members_removed.
      events: 5,
      historyRows: 2,
      enrichmentRuns: 0,
    });
    assert.deepEqual(await foundIn(t, canary), []);
    assert.equal((await ok(s, 'GET', `/v1/lists/${list.id}/contacts`)).totalCount, 0);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${acc.id}`)).relationships.$contact.values, []);
    const again = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, con.id]);
    assert.equal(again.code, 1);
  });

  test('a retry under the key of an answer a purge erased is refused, never run again', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const createAccount = { fields: { $name: 'Erased Inc' } };
    const acc = await ok(s, 'POST', '/v1/accounts', createAccount, { 'idempotency-key': 'create-account' });
    // This answer names the account only as a link: it is erased with it all the same.
    const createContact = { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: acc.id } };
    const con = await ok(s, 'POST', '/v1/contacts', createContact, { 'idempotency-key': 'create-contact' });
    await ok(s, 'DELETE', `/v1/accounts/${acc.id}`);
    const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, acc.id, '--json']);
    assert.equal(purged.code, 0, purged.err);
    assert.equal(JSON.parse(purged.out).storedResponses, 2);

    const retries: [string, unknown, string][] = [
      ['/v1/accounts', createAccount, 'create-account'],
      ['/v1/accounts', { fields: { $name: 'Another' } }, 'create-account'],
      ['/v1/contacts', createContact, 'create-contact'],
    ];
    for (const [url, body, key] of retries) {
      const res = await call(t, s.secret, 'POST', url, body, { 'idempotency-key': key });
      assert.equal(res.statusCode, 422, `${url} ${key}: ${res.body}`);
      assert.deepEqual([res.json().error.code, res.json().error.param], ['idempotency_key_reused', 'Idempotency-Key']);
    }
    assert.equal((await ok(s, 'GET', '/v1/accounts')).totalCount, 0, 'the erased account is not created again');
    assert.deepEqual(
      (await ok(s, 'GET', '/v1/contacts')).data.map((c: { id: string }) => c.id),
      [con.id],
    );
    // A new key runs the request.
    await ok(s, 'POST', '/v1/accounts', createAccount, { 'idempotency-key': 'create-account-2' });
  });

  test("a purge erases what names the id as written, not what names a look-alike (`-` for the id's `_`, capitals)", async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const gone = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Gone' } }, { 'idempotency-key': 'create-gone' });
    // Text a pattern made of the id matches: LIKE's `_` is any character, and SQLite's LIKE ignores
    // the case of ASCII letters.
    const names = [gone.id.replace('_', '-'), gone.id.toUpperCase()];
    const kept = [];
    for (const [i, name] of names.entries())
      kept.push(await ok(s, 'POST', '/v1/accounts', { fields: { $name: name } }, { 'idempotency-key': `look-alike-${i}` }));
    await ok(s, 'DELETE', `/v1/accounts/${gone.id}`);
    const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, gone.id, '--json']);
    assert.equal(purged.code, 0, purged.err);
    // Its create's answer; its created and deleted events.
    assert.deepEqual([JSON.parse(purged.out).storedResponses, JSON.parse(purged.out).events], [1, 2]);
    for (const [i, name] of names.entries()) {
      const replay = await call(t, s.secret, 'POST', '/v1/accounts', { fields: { $name: name } }, { 'idempotency-key': `look-alike-${i}` });
      assert.equal(replay.statusCode, 200, replay.body);
      assert.equal(replay.json().id, kept[i].id, 'the answer is replayed, not erased');
    }
    const created = await t.deps.db.kysely
      .selectFrom('events')
      .select('object_id')
      .where('workspace_id', '=', s.workspaceId)
      .where('type', '=', 'account.created')
      .execute();
    assert.deepEqual(created.map((e) => e.object_id).sort(), kept.map((a) => a.id).sort());
  });

  test('restore from the command line; a taken unique value is refused naming the field', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    await addField(operatorCtx(t.deps.db.kysely, s.workspaceId), { objectType: 'account', key: 'code', label: 'Code', valueType: 'TEXT', unique: true });
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A', code: 'K1' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const b = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'B', code: 'K1' } });
    const refused = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /duplicate_value.*fields\.code/);
    await ok(s, 'DELETE', `/v1/accounts/${b.id}`);
    const restored = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id]);
    assert.equal(restored.code, 0, restored.err);
    assert.equal((await ok(s, 'GET', `/v1/accounts/${a.id}`)).fields.code.value, 'K1');
    assert.equal((await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, '--older-than', 'soon'])).code, 2);
    // docs/cli.md §The operator CLI: at most 100 years, an instant a date holds.
    for (const age of ['36501', '999999999999d', '99999999999999999999m']) {
      const long = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, '--older-than', age]);
      assert.equal(long.code, 2, long.err);
      assert.match(long.err, /--older-than is at most 36500 days/);
    }
    assert.equal((await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, '--older-than', '36500'])).code, 0);
  });

  test('an id named twice is purged once, and counted once', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Twice', $website: ['https://twice.test'] } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const purged = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, a.id, a.id, '--json']);
    assert.equal(purged.code, 0, purged.err);
    const counts = JSON.parse(purged.out);
    assert.deepEqual([counts.records, counts.values, counts.valueIndexRows], [1, 2, 3], purged.out);
  });

  test('an id named twice is restored once, not refused the second time', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Twice' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const restored = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id, a.id, '--json']);
    assert.equal(restored.code, 0, restored.err);
    assert.deepEqual(JSON.parse(restored.out), [{ id: a.id, objectType: 'account', links: 0 }]);
  });

  test('--older-than 0 is wrong usage: without it, purge takes every entry', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Kept' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    for (const age of ['0', '0d', '0h', '00m']) {
      const r = await cli(t, ['trash', 'purge', '--workspace', s.workspaceId, '--older-than', age]);
      assert.equal(r.code, 2, `${age}: ${r.err}`);
      assert.match(r.err, new RegExp(`^rolodex trash: --older-than must be more than zero, not "${age}"`));
    }
    const listed = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--json']);
    assert.deepEqual(
      JSON.parse(listed.out).map((i: { id: string }) => i.id),
      [a.id],
      'nothing was purged',
    );
  });

  test('an unknown workspace or type is refused; a restore of several ids says which came back before one failed', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    for (const args of [['list'], ['restore', 'acc_x'], ['purge']]) {
      const r = await cli(t, ['trash', ...args, '--workspace', 'ws_nope']);
      assert.deepEqual([r.code, r.out], [1, ''], `${args[0]}: ${r.err}`);
      assert.match(r.err, /no workspace with id "ws_nope"/);
    }
    // A type the workspace lacks only the database can judge: refused (1), not wrong usage (2), and
    // without the usage text (docs/cli.md §The operator CLI).
    const typo = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--type', 'contacts']);
    assert.deepEqual([typo.code, typo.out], [1, ''], typo.err);
    assert.equal(
      typo.err.trim(),
      `rolodex trash: --type: "contacts" is not a type of workspace ${s.workspaceId} (account, contact, opportunity, task, note, meeting, list)`,
    );
    const empty = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--type', ' ']);
    assert.equal(empty.code, 2, empty.err);
    assert.match(empty.err, /^rolodex trash: --type names a type \(account, contact, …\)\nusage:/);
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'A' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const partial = await cli(t, ['trash', 'restore', '--workspace', s.workspaceId, a.id, 'acc_nope', '--json']);
    assert.equal(partial.code, 1);
    assert.match(partial.err, /resource_not_found.*acc_nope/);
    assert.deepEqual(JSON.parse(partial.out), [{ id: a.id, objectType: 'account', links: 0 }], 'the restore that committed is reported');
    assert.equal((await ok(s, 'GET', `/v1/accounts/${a.id}`)).id, a.id);
  });

  test('the sweeper purges the trash older than TRASH_RETENTION_DAYS; 0 keeps it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const a = await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Old' } });
    await ok(s, 'DELETE', `/v1/accounts/${a.id}`);
    const sweep = (days: number, now: number) =>
      sweepOnce({ db: t.deps.db.kysely, now, files: filesEnv(t.config, t.deps.blobs) }, { trashRetentionDays: days });
    const day = 86_400_000;
    assert.equal((await sweep(0, Date.now() + 400 * day)).trashPurged, 0);
    assert.equal((await sweep(30, Date.now() + 29 * day)).trashPurged, 0);
    // Other tests of this database may have trash of their own, as old.
    assert.ok((await sweep(30, Date.now() + 31 * day)).trashPurged >= 1);
    const listed = await cli(t, ['trash', 'list', '--workspace', s.workspaceId, '--json']);
    assert.deepEqual(JSON.parse(listed.out), []);
  });
});
