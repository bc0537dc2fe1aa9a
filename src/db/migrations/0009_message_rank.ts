import { type Kysely, sql } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank/index.ts';

// Pages at any offset for messages and members (docs/pages.md): the counts per part of a set with
// parts, the index a message page reads the shared part through, and the ranked index of the
// rows already there. The sets are spelled out here as they were when this migration was written.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rank_parts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('lo_ts', 'text', (c) => c.notNull())
    .addColumn('lo_id', 'text', (c) => c.notNull())
    .addColumn('part', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rank_parts_pk', ['scope', 'level', 'lo_ts', 'lo_id', 'part'])
    .execute();
  // A reader reads its own parts' entries, level by level, in order (n included: no table read).
  await db.schema.createIndex('rank_parts_part').on('rank_parts').columns(['scope', 'level', 'part', 'lo_ts', 'lo_id', 'n']).execute();
  // The parts of a workspace's messages, newest first: the shared one (every channel but the private
  // ones), and each private channel's. The conditions are written as the page's statements write
  // them, so that both databases use these indexes for them.
  await sql`create index messages_shared_sent on messages (workspace_id, sent_at, id) where channel_visibility <> 'private'`.execute(db);
  await sql`create index messages_private_sent on messages (workspace_id, channel_id, sent_at, id) where channel_visibility = 'private'`.execute(db);

  const sets = [
    defineRank({
      name: 'messages',
      table: 'messages',
      by: ['workspace_id'],
      ts: 'sent_at',
      id: 'id',
      part: { column: 'channel_id', when: { column: 'channel_visibility', value: 'private' } },
    }),
    defineRank({ name: 'users', table: 'users', by: ['workspace_id'], ts: 'created_at', id: 'id' }),
  ];
  for (const set of sets) await rankRebuildAll(db, set);
}
