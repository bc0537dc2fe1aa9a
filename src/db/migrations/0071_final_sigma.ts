import type { Kysely } from 'kysely';
import type { Tx } from '../types.ts';
import { buildDefinitions, type TypeDefinitions } from '../../definitions/service.ts';
import { operatorCtx } from '../../lib/context.ts';
import { valueRows } from '../../records/index/values.ts';
import { writeValueIndex } from '../../records/index/repository.ts';
import { noteMigration } from '../migration-notes.ts';

// Folded text holds σ where it held the final sigma ς (src/lib/fold.ts, docs/records.md §Value
// index). Every record with an indexed text holding ς has its value index written again as a
// write writes it now (its value rows, trigram postings and ranked values), and the meetings'
// participant addresses are folded the same way. Records, their values and their times do not
// change.
const BATCH = 500;
const NAME = '0071_final_sigma';

interface RecordRow {
  id: string;
  workspace_id: string;
  kind: string;
  fields: string;
}

/**
 * The records whose value index holds a ς: one read of the value index, whatever its plan (a
 * text holding ς is found by no index), first for one such row, so that a database without Greek
 * text reads no further; then for all of them. Memory holds the ids of those records only.
 */
async function recordsToFold(db: Kysely<any>): Promise<string[]> {
  const any = await db.selectFrom('record_values').select('record_id').where('value_text', 'like', '%ς%').limit(1).execute();
  if (any.length === 0) return [];
  const rows: { record_id: string }[] = await db.selectFrom('record_values').select('record_id').distinct().where('value_text', 'like', '%ς%').execute();
  return rows.map((r) => r.record_id).sort();
}

async function recordRows(db: Kysely<any>, ids: readonly string[]): Promise<RecordRow[]> {
  return db
    .selectFrom('records')
    .select(['id', 'workspace_id', 'kind', 'fields'])
    .where('id', 'in', [...ids])
    .orderBy('id')
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  const defs = new Map<string, TypeDefinitions | null>();
  let records = 0;
  const ids = await recordsToFold(db);
  for (let at = 0; at < ids.length; at += BATCH) {
    const byType = new Map<string, RecordRow[]>();
    for (const r of await recordRows(db, ids.slice(at, at + BATCH))) {
      const key = `${r.workspace_id}/${r.kind}`;
      byType.set(key, [...(byType.get(key) ?? []), r]);
    }
    for (const [key, group] of byType) {
      const [workspaceId, objectType] = [group[0]!.workspace_id, group[0]!.kind];
      // Built as stored, outside the cache, as migration 0056 builds them.
      if (!defs.has(key)) defs.set(key, await buildDefinitions(operatorCtx(db, workspaceId), objectType));
      const d = defs.get(key);
      if (!d) continue;
      const index = group.flatMap((r) => valueRows(workspaceId, d, r.id, JSON.parse(r.fields) as Record<string, unknown>));
      // The migrator's transaction carries none of write()'s state (src/db/write.ts), as in 0056.
      await writeValueIndex(
        db as unknown as Tx,
        d,
        group.map((r) => r.id),
        index,
      );
      records += group.length;
    }
  }
  // A meeting lists each folded address once: an address that folds to one it already lists goes.
  const dropped = await db
    .deleteFrom('meeting_participants as p')
    .where('p.email', 'like', '%ς%')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('meeting_participants as q')
          .select('q.meeting_id')
          .whereRef('q.meeting_id', '=', 'p.meeting_id')
          .where('q.email', '=', eb.fn('replace', [eb.ref('p.email'), eb.val('ς'), eb.val('σ')])),
      ),
    )
    .executeTakeFirst();
  const participants = await db
    .updateTable('meeting_participants')
    .set((eb) => ({ email: eb.fn('replace', [eb.ref('email'), eb.val('ς'), eb.val('σ')]) }))
    .where('email', 'like', '%ς%')
    .executeTakeFirst();
  const counts = { records, participants: Number(participants.numUpdatedRows), merged: Number(dropped.numDeletedRows) };
  if (counts.records + counts.participants + counts.merged > 0)
    noteMigration({
      migration: NAME,
      message: `folded the final sigma as σ in the value index of ${counts.records} records and ${counts.participants} meeting participants`,
      counts,
    });
}
