import type { Kysely } from 'kysely';
import { defineRank, rankRebuildAll } from '../rank/index.ts';

// The order-statistic index of docs/pages.md, built for the rows already there. The sets are
// spelled out here as they were when this migration was written.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rank_buckets')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('lo_ts', 'text', (c) => c.notNull())
    .addColumn('lo_id', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rank_buckets_pk', ['scope', 'level', 'lo_ts', 'lo_id'])
    .execute();
  const sets = [
    { name: 'lists', table: 'lists', by: ['workspace_id'], ts: 'created_at', id: 'id' },
    { name: 'list_members', table: 'list_members', by: ['list_id'], ts: 'added_at', id: 'entity_id' },
    { name: 'files', table: 'files', by: ['workspace_id'], where: { source: 'api' }, ts: 'created_at', id: 'id' },
  ];
  for (const set of sets) await rankRebuildAll(db, defineRank(set));
}
