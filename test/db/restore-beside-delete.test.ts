// A restore beside a delete, restore or purge of what it links to (docs/trash.md §Restore): a
// restore reads which of its links' and memberships' other ends are live and which are in the
// trash, and on PostgreSQL those ends stay locked against deletion until it commits. One side is
// held open in a transaction while the other runs as far as it can; after both commit, no live
// relationship row or list membership names a trashed record, no held row is left without its
// entry, and restoring the other end brings the link back. SQLite has one writer at a time: the
// other side waits for the open transaction, which is the same guarantee.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { write } from '../../src/db/write.ts';
import type { Database, Tx } from '../../src/db/types.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { RECORD_TYPES } from '../../src/records/service.ts';
import { purge } from '../../src/trash/purge.ts';
import { restore } from '../../src/trash/restore.ts';
import { trashList, trashRecord } from '../../src/trash/service.ts';
import { mergeRecords } from '../../src/merges/service.ts';
import { call, eachDialect, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';

/** As `rolodex trash restore` runs one id. */
function restoreAs(db: Kysely<Database>, workspaceId: string, id: string) {
  return write(db, (tx) => restore(operatorCtx(tx, workspaceId), { id }), { followUpFailed: () => {} });
}

/**
 * Runs `open` in a transaction, then starts `beside` and lets it run until it answers or, on
 * PostgreSQL, waits for that transaction; then commits. Returns `beside`'s outcome.
 */
async function holdOpen<T>(t: TestApp, open: (tx: Tx) => Promise<unknown>, beside: () => Promise<T>): Promise<T> {
  const db = t.deps.db.kysely;
  let running: Promise<T> | undefined;
  await write(
    db,
    async (tx) => {
      await open(tx);
      const { rows } = await sql<{ pid: number }>`select ${t.dialect === 'postgres' ? sql`pg_backend_pid()` : sql`0`} as pid`.execute(tx);
      const pid = rows[0]!.pid;
      let done = false;
      running = beside().finally(() => (done = true));
      running.catch(() => {});
      // On SQLite it waits for the one writer until COMMIT: a moment shows it makes no progress.
      const deadline = Date.now() + (t.dialect === 'postgres' ? 5000 : 200);
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (done || Date.now() > deadline) break;
        if (t.dialect !== 'postgres') continue;
        const blocked = await sql<{ n: number | string }>`select count(*) as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(db);
        if (Number(blocked.rows[0]!.n) > 0) break;
      }
    },
    { followUpFailed: () => {} },
  );
  return running!;
}

/**
 * Rows naming `ids` that must not exist: live links and memberships naming a trashed record, held
 * rows without their entry.
 */
async function strays(db: Kysely<Database>, ids: readonly string[]): Promise<Record<string, number>> {
  const count = async (q: ReturnType<typeof sql<{ n: number | string }>>) => Number((await q.execute(db)).rows[0]!.n);
  const these = sql.join(ids);
  const trashed = (column: string) => sql`exists (select 1 from trash t where t.id = ${sql.ref(column)} and t.id in (${these}))`;
  const orphan = sql`not exists (select 1 from trash t where t.id = h.trash_id)`;
  return {
    links: await count(sql`select count(*) as n from entity_relationships r where ${trashed('r.source_id')} or ${trashed('r.target_id')}`),
    members: await count(sql`select count(*) as n from list_members m where ${trashed('m.list_id')} or ${trashed('m.entity_id')}`),
    heldLinks: await count(sql`select count(*) as n from trash_links h where ${orphan} and (h.source_id in (${these}) or h.target_id in (${these}))`),
    heldMembers: await count(sql`select count(*) as n from trash_members h where ${orphan} and (h.list_id in (${these}) or h.entity_id in (${these}))`),
  };
}
const NONE = { links: 0, members: 0, heldLinks: 0, heldMembers: 0 };

eachDialect('a restore beside a change of its other ends', (ctx) => {
  async function ok(s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
    const res = await call(ctx(), s.secret, method, url, body);
    assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
    return res.json();
  }
  const ids = (page: { data: { id: string }[] }) => page.data.map((r) => r.id);

  /** A contact linked to an account, the contact in the trash. */
  async function linked(s: Seeded): Promise<{ contact: string; account: string }> {
    const account = (await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Acme' } })).id as string;
    const contact = (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } }, relationships: { $account: account } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${contact}`);
    return { contact, account };
  }

  test('a delete of the other end while the restore is open: the link goes to the trash with it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    const deleted = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: contact }),
      () => call(t, s.secret, 'DELETE', `/v1/accounts/${account}`),
    );
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, account]), NONE);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, []);
    await restoreAs(t.deps.db.kysely, s.workspaceId, account);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, [account]);
  });

  test('a restore while a delete of the other end is open: the link goes to that end’s entry', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    const restored = await holdOpen(
      t,
      (tx) => trashRecord(operatorCtx(tx, s.workspaceId), RECORD_TYPES.account, { id: account }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, contact),
    );
    assert.equal(restored.id, contact);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, account]), NONE);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, []);
    await restoreAs(t.deps.db.kysely, s.workspaceId, account);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, [account]);
  });

  test('a restore of the other end while the restore that holds a link under it is open: the link comes back', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    await ok(s, 'DELETE', `/v1/accounts/${account}`);
    const restored = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: contact }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, account),
    );
    assert.equal(restored.id, account);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, account]), NONE);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, [account]);
  });

  test('a restore while a restore of the other end is open: the link comes back', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    await ok(s, 'DELETE', `/v1/accounts/${account}`);
    const restored = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: account }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, contact),
    );
    assert.equal(restored.id, contact);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, account]), NONE);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, [account]);
  });

  test('a restore of a member while its list’s restore is open, and of a list while its member’s is: each membership comes back', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = async (n: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).id as string;
    const [ann, bob] = [await contact('Ann'), await contact('Bob')];
    const newList = async (name: string) =>
      (await ok(s, 'POST', '/v1/lists', { fields: { $name: name, $objectType: 'contact' }, relationships: { $contacts: [ann, bob] } })).id as string;
    const [first, second] = [await newList('First'), await newList('Second')];
    for (const id of [ann, bob]) await ok(s, 'DELETE', `/v1/contacts/${id}`);
    for (const id of [first, second]) await ok(s, 'DELETE', `/v1/lists/${id}`);
    const db = t.deps.db.kysely;
    const member = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: first }),
      () => restoreAs(db, s.workspaceId, ann),
    );
    assert.equal(member.id, ann);
    const listed = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: bob }),
      () => restoreAs(db, s.workspaceId, second),
    );
    assert.equal(listed.id, second);
    assert.deepEqual(await strays(db, [ann, bob, first, second]), NONE);
    for (const list of [first, second]) assert.deepEqual(ids(await ok(s, 'GET', `/v1/lists/${list}/contacts`)).sort(), [ann, bob].sort(), list);
  });

  test('a restore while a merge of the other end is open: the link names the primary', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    const primary = (await ok(s, 'POST', '/v1/accounts', { fields: { $name: 'Primary' } })).id as string;
    const restored = await holdOpen(
      t,
      (tx) => mergeRecords(operatorCtx(tx, s.workspaceId), RECORD_TYPES.account, { primaryId: primary, duplicateId: account }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, contact),
    );
    assert.equal(restored.id, contact);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, account]), NONE);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, [primary]);
    assert.deepEqual((await ok(s, 'GET', `/v1/accounts/${primary}`)).relationships.$contact.values, [contact]);
  });

  test('a list’s restore while a merge of its member is open: the primary is the member', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = async (n: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: n } } })).id as string;
    const [primary, duplicate] = [await contact('Ann'), await contact('Ann L.')];
    const list = (await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [duplicate] } })).id as string;
    await ok(s, 'DELETE', `/v1/lists/${list}`);
    const restored = await holdOpen(
      t,
      (tx) => mergeRecords(operatorCtx(tx, s.workspaceId), RECORD_TYPES.contact, { primaryId: primary, duplicateId: duplicate }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, list),
    );
    assert.equal(restored.id, list);
    assert.deepEqual(await strays(t.deps.db.kysely, [primary, duplicate, list]), NONE);
    const members = await ok(s, 'GET', `/v1/lists/${list}/contacts`);
    assert.deepEqual([ids(members), members.totalCount], [[primary], 1]);
  });

  test('a purge of the other end while the restore that holds a link under it is open: nothing names it after', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const { contact, account } = await linked(s);
    await ok(s, 'DELETE', `/v1/accounts/${account}`);
    const db = t.deps.db.kysely;
    const purged = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: contact }),
      () => write(db, (tx) => purge(operatorCtx(tx, s.workspaceId), { ids: [account] }), { followUpFailed: () => {} }),
    );
    assert.equal(purged.relationships, 1);
    assert.deepEqual(await strays(db, [contact, account]), NONE);
    const held = await db
      .selectFrom('trash_links')
      .select('trash_id')
      .where((eb) => eb.or([eb('source_id', '=', account), eb('target_id', '=', account)]))
      .execute();
    assert.deepEqual(held, []);
    assert.deepEqual((await ok(s, 'GET', `/v1/contacts/${contact}`)).relationships.$account.values, []);
  });

  test('a delete of a member while its list’s restore is open: the membership goes to the trash with it', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } })).id as string;
    const list = (await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [contact] } })).id as string;
    await ok(s, 'DELETE', `/v1/lists/${list}`);
    const deleted = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: list }),
      () => call(t, s.secret, 'DELETE', `/v1/contacts/${contact}`),
    );
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, list]), NONE);
    assert.equal((await ok(s, 'GET', `/v1/lists/${list}/contacts`)).totalCount, 0);
    await restoreAs(t.deps.db.kysely, s.workspaceId, contact);
    assert.deepEqual(ids(await ok(s, 'GET', `/v1/lists/${list}/contacts`)), [contact]);
  });

  test('a restore of a member while a delete of its list is open: the membership goes to the list’s entry', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const contact = (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } })).id as string;
    const list = (await ok(s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [contact] } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${contact}`);
    const restored = await holdOpen(
      t,
      (tx) => trashList(operatorCtx(tx, s.workspaceId), { id: list }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, contact),
    );
    assert.equal(restored.id, contact);
    assert.deepEqual(await strays(t.deps.db.kysely, [contact, list]), NONE);
    await restoreAs(t.deps.db.kysely, s.workspaceId, list);
    assert.deepEqual(ids(await ok(s, 'GET', `/v1/lists/${list}/contacts`)), [contact]);
  });

  test('two restores of records one note links to, at once: both links come back, one after the other', async () => {
    const t = ctx();
    const s = await seedWorkspace(t);
    const person = async (lastName: string) => (await ok(s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'A', lastName } } })).id as string;
    const [stays, first, second] = [await person('Stays'), await person('First'), await person('Second')];
    const note = (await ok(s, 'POST', '/v1/notes', { fields: { $title: 'N' }, relationships: { $contact: [stays, first, second] } })).id as string;
    await ok(s, 'DELETE', `/v1/contacts/${first}`);
    await ok(s, 'DELETE', `/v1/contacts/${second}`);
    // Each puts the note's row back after the note's current rows: the second must see the first's.
    const restored = await holdOpen(
      t,
      (tx) => restore(operatorCtx(tx, s.workspaceId), { id: first }),
      () => restoreAs(t.deps.db.kysely, s.workspaceId, second),
    );
    assert.equal(restored.id, second);
    assert.deepEqual((await ok(s, 'GET', `/v1/notes/${note}`)).relationships.$contact.values, [stays, first, second]);
  });
});
