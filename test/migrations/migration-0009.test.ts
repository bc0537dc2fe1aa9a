// Migration 0009_message_rank builds the ranked index of messages (with their parts) and of users
// that already exist (docs/pages.md): a database at 0006 with two workspaces, channels of every
// visibility, members, messages and users sharing timestamps is migrated, then every count and part
// is exact and every caller's page equals a full scan, on both databases; the index then keeps up
// with an import and a visibility change.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setVisibility } from '../../src/channels/service.ts';
import { importKinds } from '../../src/cli/import-kinds.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { Executor } from '../../src/db/types.ts';
import { runImport } from '../../src/import/run.ts';
import { operatorCtx } from '../../src/lib/context.ts';
import { findPage, MESSAGES } from '../../src/messages/repository.ts';
import { USERS } from '../../src/users/repository.ts';
import { createTestDb, type TestDb, testDialects } from '../helpers/db.ts';
import { message, visibleByScan } from '../helpers/messages.ts';
import { checkEntries, checkPages, checkParts, useRankSizes } from '../helpers/rank.ts';
import { write } from '../../src/db/write.ts';

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const VISIBILITIES = ['public', 'restricted', 'private'];

/** Rows as 0006 knew them. */
async function seed(db: Executor) {
  const k = db as any;
  await k
    .insertInto('workspaces')
    .values(['ws_a', 'ws_b'].map((id) => ({ id, name: id, created_at: at(0) })))
    .execute();
  const users = Array.from({ length: 40 }, (_, i) => ({
    id: `usr_${String(i).padStart(3, '0')}`,
    workspace_id: i % 4 === 3 ? 'ws_b' : 'ws_a',
    external_id: `u${i}`,
    email: `u${i}@x.test`,
    first_name: null,
    last_name: null,
    profile_image_url: null,
    role: 'member',
    created_at: at(Math.floor(i / 5)), // five share a millisecond
    updated_at: at(0),
  }));
  await k.insertInto('users').values(users).execute();
  const channels = Array.from({ length: 9 }, (_, i) => ({
    id: `chn_${i}`,
    workspace_id: i < 7 ? 'ws_a' : 'ws_b',
    external_id: `c${i}`,
    provider: 'slack',
    name: `c${i}`,
    visibility: VISIBILITIES[i % 3],
    message_count: 0,
    created_at: at(0),
    updated_at: at(0),
  }));
  await k.insertInto('channels').values(channels).execute();
  // usr_000 is in c0, c2 (private), c5 (private); usr_001 in c2; usr_002 in none.
  await k
    .insertInto('channel_members')
    .values(
      [
        ['chn_0', 'usr_000'],
        ['chn_2', 'usr_000'],
        ['chn_5', 'usr_000'],
        ['chn_2', 'usr_001'],
        ['chn_8', 'usr_003'],
      ].map(([channel_id, user_id]) => ({ channel_id, user_id, created_at: at(0) })),
    )
    .execute();
  const messages = Array.from({ length: 300 }, (_, i) => {
    const ch = channels[(i * 7) % 9] as (typeof channels)[number];
    return {
      id: `msg_${String(i).padStart(4, '0')}`,
      workspace_id: ch.workspace_id,
      channel_id: ch.id,
      channel_visibility: ch.visibility,
      external_id: `m${i}`,
      sent_at: at(Math.floor(i / 6) * 1000),
      edited_at: null,
      provider: 'slack',
      provider_thread_id: null,
      text_type: 'TEXT',
      created_at: at(0),
      updated_at: at(0),
    };
  });
  for (let i = 0; i < messages.length; i += 100)
    await k
      .insertInto('messages')
      .values(messages.slice(i, i + 100))
      .execute();
}

async function checkCallers(db: Executor, workspaceId: string, userIds: Array<string | null>) {
  const shape = await checkEntries(db, MESSAGES, [workspaceId]);
  await checkParts(db, MESSAGES, [workspaceId]);
  for (const userId of userIds) {
    const want = await visibleByScan(db, workspaceId, userId);
    const step = Math.max(1, Math.floor(want.length / 40));
    for (const offset of [...Array.from({ length: Math.ceil((want.length + 1) / step) }, (_, i) => i * step), want.length, want.length + 2]) {
      const page = await findPage(db, { workspaceId, userId }, { offset, limit: 7 });
      assert.equal(page.total, want.length, `${userId}: total`);
      assert.deepEqual(
        page.rows.map((r) => r.id),
        want.slice(offset, offset + 7),
        `${userId} offset ${offset}`,
      );
    }
  }
  return shape;
}

for (const dialect of testDialects()) {
  describe(`migration 0009_message_rank [${dialect}]`, () => {
    useRankSizes({ leaf: { max: 8, target: 6, min: 3 }, fanout: { max: 6, target: 5, min: 2 } });
    let tdb: TestDb;
    before(async () => {
      tdb = await createTestDb(dialect, { before: '0007' });
    });
    after(() => tdb.drop());

    test('messages and users at 0006 get exact counts and parts, every caller pages as a full scan, and the index keeps up', async () => {
      const db = tdb.db.kysely;
      await seed(db);
      // Every later migration runs too; 0009 is the one under test.
      assert.ok((await migrate(tdb.db)).includes('0009_message_rank'));

      const shape = await checkCallers(db, 'ws_a', [null, 'usr_000', 'usr_001', 'usr_002']);
      assert.ok((shape.entries[1] ?? 0) > 3, `upper entries built: ${shape.entries.join(',')}`);
      await checkCallers(db, 'ws_b', [null, 'usr_003']);
      for (const [ws, n] of [
        ['ws_a', 30],
        ['ws_b', 10],
      ] as const) {
        assert.equal((await checkEntries(db, USERS, [ws])).total, n);
        await checkPages(db, USERS, [ws], { limit: 4 });
      }

      // The built index keeps up: an import that adds and moves messages, then a channel turned private.
      await runImport(operatorCtx(db, 'ws_a'), {
        kinds: importKinds(),
        text: [
          ...Array.from({ length: 20 }, (_, i) => message(`m${i * 3}`, `c${(i % 6) + 1}`, at(i * 500), 'moved')),
          ...Array.from({ length: 15 }, (_, i) => message(`new${i}`, `c${i % 7}`, at(i * 2000), 'new')),
        ]
          .map((o) => JSON.stringify(o))
          .join('\n'),
      });
      await write(db, (tx) => setVisibility(operatorCtx(tx, 'ws_a'), { channel: 'c0', visibility: 'private' }));
      await checkCallers(db, 'ws_a', [null, 'usr_000', 'usr_001', 'usr_002']);
    });
  });
}
