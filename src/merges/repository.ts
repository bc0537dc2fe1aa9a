// SQL of merges (docs/merge.md): the merge rows, and the moves of every link of a duplicate onto
// its primary: relationship rows others hold to it, its own rows, and rows held in the trash.
import { chunks } from '../db/chunks.ts';
import type { Executor } from '../db/types.ts';
import type { MergesTable } from './tables.ts';

export type MergeRow = MergesTable;

export async function insertMerge(tx: Executor, row: MergeRow): Promise<void> {
  await tx.insertInto('merges').values(row).execute();
}

export async function findMerge(db: Executor, workspaceId: string, id: string): Promise<MergeRow | undefined> {
  const row = await db.selectFrom('merges').selectAll().where('id', '=', id).executeTakeFirst();
  return row?.workspace_id === workspaceId ? row : undefined;
}

export interface Row {
  source_id: string;
  name: string;
  object_type: string;
  target_id: string;
  position: number;
}

/** Rows whose source is `id`, by name and position. */
export async function ownRows(db: Executor, id: string): Promise<Row[]> {
  return db.selectFrom('entity_relationships').selectAll().where('source_id', '=', id).orderBy('name').orderBy('position').execute();
}

/** Rows other records hold to `id` (`id` as target, not as source). */
export async function rowsTo(db: Executor, id: string): Promise<Row[]> {
  return db.selectFrom('entity_relationships').selectAll().where('target_id', '=', id).where('source_id', '!=', id).execute();
}

export async function deleteRow(tx: Executor, r: Pick<Row, 'source_id' | 'name' | 'position'>): Promise<void> {
  await tx.deleteFrom('entity_relationships').where('source_id', '=', r.source_id).where('name', '=', r.name).where('position', '=', r.position).execute();
}

export async function retarget(tx: Executor, r: Pick<Row, 'source_id' | 'name' | 'position'>, targetId: string): Promise<void> {
  await tx
    .updateTable('entity_relationships')
    .set({ target_id: targetId })
    .where('source_id', '=', r.source_id)
    .where('name', '=', r.name)
    .where('position', '=', r.position)
    .execute();
}

export async function deleteOwnRows(tx: Executor, id: string): Promise<void> {
  await tx.deleteFrom('entity_relationships').where('source_id', '=', id).execute();
}

export async function insertRows(tx: Executor, rows: readonly Row[]): Promise<void> {
  for (const part of chunks([...rows], 1000)) await tx.insertInto('entity_relationships').values(part).execute();
}

/** Rows and memberships that other trash entries hold for the duplicate now name the primary. */
export async function repointHeld(tx: Executor, from: string, to: string): Promise<number> {
  let n = 0;
  for (const col of ['source_id', 'target_id'] as const) {
    const r = await tx
      .updateTable('trash_links')
      .set({ [col]: to })
      .where(col, '=', from)
      .where('trash_id', '!=', from)
      .executeTakeFirst();
    n += Number(r.numUpdatedRows);
  }
  const m = await tx.updateTable('trash_members').set({ entity_id: to }).where('entity_id', '=', from).where('trash_id', '!=', from).executeTakeFirst();
  return n + Number(m.numUpdatedRows);
}
