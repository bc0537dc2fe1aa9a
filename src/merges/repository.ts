// SQL of merges (docs/merge.md): the merge rows, and the moves of every link of a duplicate onto
// its primary: relationship rows others hold to it, its own rows, and rows held in the trash.
import { chunks, deferred, type Executor } from '../db/index.ts';
import { sql } from 'kysely';
import type { MergesTable } from './tables.ts';

export type MergeRow = MergesTable;

export async function insertMerge(tx: Executor, row: MergeRow): Promise<void> {
  await tx.insertInto('merges').values(row).execute();
}

/** Types of merges a read may find: the built-in `types` named, and with `custom` every custom type. */
export interface MergeTypes {
  types: readonly string[];
  custom: boolean;
}

const BUILT_IN = ['account', 'contact', 'opportunity', 'task', 'note'];

export async function findMerge(db: Executor, workspaceId: string, id: string, only: MergeTypes | null): Promise<MergeRow | undefined> {
  let q = db.selectFrom('merges').selectAll().where('id', '=', id);
  if (only)
    q = q.where((eb) =>
      eb.or([...(only.types.length > 0 ? [eb('entity_type', 'in', only.types)] : []), ...(only.custom ? [eb('entity_type', 'not in', BUILT_IN)] : [])]),
    );
  const row = await q.executeTakeFirst();
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

// The moves answer nothing the merge needs: they go out with its next read (src/db/pipeline.ts),
// one statement for a batch of rows, each row named by its key (source, name, position).
const keys = (rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[]) =>
  sql`(source_id, name, position) in (values ${sql.join(rows.map((r) => sql`(cast(${r.source_id} as text), cast(${r.name} as text), cast(${r.position} as integer))`))})`;

export async function deleteRows(tx: Executor, rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[]): Promise<void> {
  for (const part of chunks([...rows], 300)) await deferred(tx, sql`delete from entity_relationships where ${keys(part)}`);
}

export async function retarget(tx: Executor, rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[], targetId: string): Promise<void> {
  for (const part of chunks([...rows], 300)) await deferred(tx, sql`update entity_relationships set target_id = ${targetId} where ${keys(part)}`);
}

export async function deleteOwnRows(tx: Executor, id: string): Promise<void> {
  await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', '=', id));
}

export async function insertRows(tx: Executor, rows: readonly Row[]): Promise<void> {
  for (const part of chunks([...rows], 1000)) await deferred(tx, tx.insertInto('entity_relationships').values(part));
}

/** Rows and memberships that other trash entries hold for the duplicate now name the primary; sent together, one round trip. */
export async function repointHeld(tx: Executor, from: string, to: string): Promise<number> {
  const moved = await Promise.all([
    ...(['source_id', 'target_id'] as const).map((col) =>
      tx
        .updateTable('trash_links')
        .set({ [col]: to })
        .where(col, '=', from)
        .where('trash_id', '!=', from)
        .executeTakeFirst(),
    ),
    tx.updateTable('trash_members').set({ entity_id: to }).where('entity_id', '=', from).where('trash_id', '!=', from).executeTakeFirst(),
  ]);
  return moved.reduce((n, r) => n + Number(r.numUpdatedRows), 0);
}
