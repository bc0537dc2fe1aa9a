// SQL of merges (docs/merge.md): the merge rows, and the moves of every link of a duplicate onto
// its primary: relationship rows others hold to it, its own rows, and rows held in the trash.
import { chunks, deferred, deferredRows, type Executor, type Tx } from '../db/index.ts';
import { type RawBuilder, sql } from 'kysely';
import type { MergesTable } from './tables.ts';

export type MergeRow = MergesTable;

/** Answers nothing the merge needs: goes out with its next read (src/db/pipeline.ts). */
export async function insertMerge(tx: Tx, row: MergeRow): Promise<void> {
  await deferred(tx, tx.insertInto('merges').values(row));
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

export interface PairRows {
  /** Rows whose source is each record, by name and position. */
  own: [Row[], Row[]];
  /** Rows other records hold to each record (the record as target, not as source). */
  to: [Row[], Row[]];
}

/**
 * The rows of both records and the rows held to them, read together: the second read goes out
 * with the first (src/db/pipeline.ts), one round trip for both.
 */
export async function pairRows(db: Tx, ids: readonly [string, string]): Promise<PairRows> {
  const own = await deferredRows(
    db,
    db.selectFrom('entity_relationships').selectAll().where('source_id', 'in', ids).orderBy('source_id').orderBy('name').orderBy('position'),
  );
  const to = await db.selectFrom('entity_relationships').selectAll().where('target_id', 'in', ids).execute();
  const rows = own.rows ?? [];
  const mine = (id: string) => rows.filter((r) => r.source_id === id);
  const held = (id: string) => to.filter((r) => r.target_id === id && r.source_id !== id);
  return { own: [mine(ids[0]), mine(ids[1])], to: [held(ids[0]), held(ids[1])] };
}

// The moves answer nothing the merge needs: they go out with its next read (src/db/pipeline.ts),
// one statement for a batch of rows, each row named by its key (source, name, position).
const keys = (rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[]) =>
  sql`(source_id, name, position) in (values ${sql.join(rows.map((r) => sql`(cast(${r.source_id} as text), cast(${r.name} as text), cast(${r.position} as integer))`))})`;

export async function deleteRows(tx: Tx, rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[]): Promise<void> {
  for (const part of chunks([...rows], 300)) await deferred(tx, sql`delete from entity_relationships where ${keys(part)}`);
}

export async function retarget(tx: Tx, rows: readonly Pick<Row, 'source_id' | 'name' | 'position'>[], targetId: string): Promise<void> {
  for (const part of chunks([...rows], 300)) await deferred(tx, sql`update entity_relationships set target_id = ${targetId} where ${keys(part)}`);
}

export async function deleteOwnRows(tx: Tx, id: string): Promise<void> {
  await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', '=', id));
}

export async function insertRows(tx: Tx, rows: readonly Row[]): Promise<void> {
  for (const part of chunks([...rows], 1000)) await deferred(tx, tx.insertInto('entity_relationships').values(part));
}

/**
 * Rows and memberships that other trash entries hold for each duplicate of `moves` (duplicate →
 * primary) now name its primary, one row for one link as among live rows (docs/merge.md §Links): a
 * held row of a duplicate whose entry already holds the same link of the primary (same name and
 * other end: has_many union, has_one one row; the same list) is dropped, and of the rows of one
 * entry that become one link through several duplicates the first (lowest position or oldest
 * membership, then lowest id) stays, so that the restore of that entry puts each link back once.
 * Each held row touches one live end and its entry's trashed one, so two rows that become one link
 * are always held by one entry. No primary is itself a duplicate of `moves`. Six statements for up
 * to 300 duplicates, whatever their number, the drops going out with the updates, the first five
 * with the sixth (src/db/pipeline.ts), one round trip. Returns how many moved.
 */
export async function repointHeld(tx: Tx, moves: ReadonlyMap<string, string>): Promise<number> {
  let n = 0;
  for (const part of chunks([...moves], 300)) {
    // The pairs as a table of each statement: `to(x)` is x's primary, null when x is no duplicate.
    const m = sql`with m (from_id, to_id) as (values ${sql.join(part.map(([from, to]) => sql`(cast(${from} as text), cast(${to} as text))`))})`;
    const froms = sql.join(part.map(([from]) => sql`${from}`));
    const to = (col: string) => sql`(select to_id from m where from_id = ${sql.ref(col)})`;
    /**
     * Drops the held rows of `table` that name a duplicate in `col`, under another entry than its
     * own, when a row `p` of that entry with the same link (`same`) names its primary, or names
     * another duplicate of that primary and comes `first`.
     */
    const drop = (table: 'trash_links' | 'trash_members', col: string, same: RawBuilder<unknown>, first: RawBuilder<unknown>) =>
      sql`${m} delete from ${sql.table(table)} where ${sql.ref(`${table}.${col}`)} in (${froms}) and trash_id <> ${sql.ref(col)} and exists (
        select 1 from ${sql.table(table)} p where p.trash_id = ${sql.ref(`${table}.trash_id`)} and ${same} and (p.${sql.raw(col)} = ${to(`${table}.${col}`)}
          or (p.${sql.raw(col)} <> ${sql.ref(`${table}.${col}`)} and p.trash_id <> p.${sql.raw(col)} and ${to(`p.${col}`)} = ${to(`${table}.${col}`)} and ${first})))`;
    for (const [col, end] of [
      ['source_id', 'target_id'],
      ['target_id', 'source_id'],
    ] as const)
      await deferred(
        tx,
        drop(
          'trash_links',
          col,
          sql`p.name = trash_links.name and p.${sql.raw(end)} = ${sql.ref(`trash_links.${end}`)}`,
          sql`(p.position < trash_links.position or (p.position = trash_links.position and p.${sql.raw(col)} < ${sql.ref(`trash_links.${col}`)}))`,
        ),
      );
    await deferred(
      tx,
      drop(
        'trash_members',
        'entity_id',
        sql`p.list_id = trash_members.list_id`,
        sql`(p.added_at < trash_members.added_at or (p.added_at = trash_members.added_at and p.entity_id < trash_members.entity_id))`,
      ),
    );
    const links = [];
    for (const col of ['source_id', 'target_id'] as const)
      links.push(
        await deferredRows(
          tx,
          sql<{ trash_id: string }>`${m} update trash_links set ${sql.ref(col)} = ${to(`trash_links.${col}`)}
            where ${sql.ref(col)} in (${froms}) and trash_id <> ${sql.ref(col)} returning trash_id`,
        ),
      );
    const members = await sql<{ trash_id: string }>`${m} update trash_members set entity_id = ${to('trash_members.entity_id')}
      where entity_id in (${froms}) and trash_id <> entity_id returning trash_id`.execute(tx);
    n += links.reduce((k, r) => k + (r.rows?.length ?? 0), members.rows.length);
  }
  return n;
}
