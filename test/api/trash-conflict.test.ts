// `rolodex trash purge`, `rolodex trash restore` and the sweeper's purge of the trash past its
// retention, cancelled by a deadlock, run again (docs/design.md §Database, "A conflict between
// transactions"). A restore of a contact locks its entry, releases
// the memberships it holds, and then reads whether their list is in the trash, locking that entry;
// a purge of the list locks the list's entry and then erases every held row naming the list, the
// contact's too. Run at once, each waits for the other. The test plays one side in a transaction
// of its own and lets the command play the other: the command waits first, so its deadlock check
// runs first and PostgreSQL cancels it; the holder's wait then ends, and it rolls back. SQLite has
// one writer at a time and never deadlocks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { isTransactionConflict, type Tx, write } from '../../src/db/index.ts';
import { sweepOnce } from '../../src/jobs/sweeper.ts';
import { filesEnv } from '../../src/files/service.ts';
import * as repo from '../../src/trash/repository.ts';
import { buildTestApp, call, type Seeded, seedWorkspace, type TestApp } from '../helpers/app.ts';
import { rolodex } from '../helpers/cli.ts';
import { testDialects } from '../helpers/db.ts';
import { waiterOf } from '../helpers/pg-locks.ts';

class RolledBack extends Error {}

/** One side of the deadlock in a transaction of the test's, the other a command run meanwhile. */
interface Play<T> {
  first: (tx: Tx) => Promise<unknown>;
  command: () => Promise<T>;
  second: (tx: Tx) => Promise<unknown>;
}

/**
 * Sets up, runs `first` in a transaction, then `command`; once the command waits for the
 * transaction, runs `second` (which waits for the command: a deadlock) and rolls back. Returns the
 * command's outcome. The command's deadlock check comes 1 s after its wait began, so `second` runs
 * only while it has waited less than 300 ms: on a machine too loaded for that, the transaction
 * rolls back at once, and the whole is set up and played again (five tries at most), as it is when
 * PostgreSQL cancels the holder rather than the command.
 */
async function deadlocked<S, T>(t: TestApp, setUp: () => Promise<S>, play: (seeded: S) => Play<T>): Promise<S & { outcome: T }> {
  for (let i = 0; i < 5; i++) {
    const seeded = await setUp();
    const { first, command, second } = play(seeded);
    let sent: Promise<T> | undefined;
    let closed = false;
    await write(t.deps.db.kysely, async (tx) => {
      await first(tx);
      // The deferred writes of `first` go out with an awaited statement (src/db/pipeline.ts).
      await sql`select 1`.execute(tx);
      sent = command();
      const waiter = await waiterOf(tx);
      assert.ok(waiter, 'the command never waited for the holder');
      if (waiter.waitedMs < 300) {
        closed = true;
        await second(tx);
      }
      throw new RolledBack();
    }).catch((err: unknown) => {
      if (err instanceof RolledBack) return;
      // On a loaded machine the holder's deadlock check may come first: PostgreSQL then cancels
      // the holder, and the command goes on uncancelled. That plays nothing: set up and try again.
      if (!isTransactionConflict(err)) throw err;
      closed = false;
    });
    const outcome = await sent!;
    if (closed) return { ...seeded, outcome };
  }
  throw new Error('the deadlock could not be arranged in five tries');
}

async function ok(t: TestApp, s: Seeded, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) {
  const res = await call(t, s.secret, method, url, body);
  assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`);
  return res.json();
}

/** A contact and its list, both in the trash: the contact's entry holds the membership. */
async function setUp(t: TestApp) {
  const s = await seedWorkspace(t);
  const contact = (await ok(t, s, 'POST', '/v1/contacts', { fields: { $name: { firstName: 'Ann' } } })).id as string;
  const list = (await ok(t, s, 'POST', '/v1/lists', { fields: { $name: 'L', $objectType: 'contact' }, relationships: { $contacts: [contact] } })).id as string;
  await ok(t, s, 'DELETE', `/v1/contacts/${contact}`);
  await ok(t, s, 'DELETE', `/v1/lists/${list}`);
  return { s, contact, list };
}

for (const dialect of testDialects().filter((d) => d === 'postgres'))
  describe(`trash commands cancelled by a deadlock [${dialect}]`, () => {
    test('a purge of a list beside a restore of its member: cancelled once, it runs again and purges', async () => {
      const t = await buildTestApp(dialect);
      try {
        const {
          s,
          contact,
          outcome: purged,
        } = await deadlocked(
          t,
          () => setUp(t),
          ({ s, contact, list }) => ({
            first: async (tx) => {
              await repo.findTrashLocked(tx, s.workspaceId, contact);
              await repo.releaseMembers(tx, contact);
            },
            command: () => rolodex(t, ['trash', 'purge', '--workspace', s.workspaceId, list, '--json']),
            second: (tx) => repo.trashedAmong(tx, s.workspaceId, [list]),
          }),
        );
        assert.equal(purged.code, 0, purged.err);
        assert.equal(JSON.parse(purged.out).listMemberships, 1);
        const left = await rolodex(t, ['trash', 'list', '--workspace', s.workspaceId, '--json']);
        assert.deepEqual(
          JSON.parse(left.out).map((e: { id: string }) => e.id),
          [contact],
        );
      } finally {
        await t.close();
      }
    });

    test("the sweeper's purge of a list beside a restore of its member: cancelled once, it runs again and purges", async () => {
      const t = await buildTestApp(dialect);
      try {
        // Two days on, with a retention of one day, only the list is due: the contact's entry is
        // dated two days on.
        const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
        const sweep = { db: t.deps.db.kysely, now: Date.now() + 2 * 86_400_000, files: filesEnv(t.config, t.deps.blobs) };
        const dated = async () => {
          const seeded = await setUp(t);
          await t.deps.db.kysely.updateTable('trash').set({ deleted_at: later }).where('id', '=', seeded.contact).execute();
          return seeded;
        };
        const {
          s,
          contact,
          outcome: swept,
        } = await deadlocked(t, dated, ({ s, contact, list }) => ({
          first: async (tx) => {
            await repo.findTrashLocked(tx, s.workspaceId, contact);
            await repo.releaseMembers(tx, contact);
          },
          command: () => sweepOnce(sweep, { trashRetentionDays: 1 }),
          second: (tx) => repo.trashedAmong(tx, s.workspaceId, [list]),
        }));
        assert.equal(swept.trashPurged, 1);
        const left = await rolodex(t, ['trash', 'list', '--workspace', s.workspaceId, '--json']);
        assert.deepEqual(
          JSON.parse(left.out).map((e: { id: string }) => e.id),
          [contact],
        );
      } finally {
        await t.close();
      }
    });

    test('a restore of a member beside a purge of its list: cancelled once, it runs again and restores', async () => {
      const t = await buildTestApp(dialect);
      try {
        const {
          s,
          contact,
          list,
          outcome: restored,
        } = await deadlocked(
          t,
          () => setUp(t),
          ({ s, contact, list }) => ({
            first: (tx) => repo.findTrashLocked(tx, s.workspaceId, list),
            command: () => rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, contact, '--json']),
            second: (tx) => repo.eraseHeld(tx, [list]),
          }),
        );
        assert.equal(restored.code, 0, restored.err);
        assert.equal(JSON.parse(restored.out)[0].id, contact);
        await ok(t, s, 'GET', `/v1/contacts/${contact}`);
        // The list is still in the trash and holds the membership: its restore brings it back.
        const back = await rolodex(t, ['trash', 'restore', '--workspace', s.workspaceId, list]);
        assert.equal(back.code, 0, back.err);
        const members = await ok(t, s, 'GET', `/v1/lists/${list}/contacts`);
        assert.deepEqual(
          members.data.map((r: { id: string }) => r.id),
          [contact],
        );
      } finally {
        await t.close();
      }
    });
  });
