// SQL of records (docs/records.md): a record's row and its own relationship rows, read one by
// one, by page (the ranked listing, docs/pages.md) or in batches (own rows by source, inverse rows
// by target), and written by the API, the import, the trash and merges.
import {
  chunks,
  deferred,
  defineRank,
  holdsText,
  insertRows,
  jsonArraysAgg,
  keyedRead,
  lockedAgainstDelete,
  lockedForChange,
  lockedForUpdate,
  lockPartition,
  rankDelete,
  rankInsert,
  rankPage,
  type Executor,
  type LockMode,
  type Tx,
} from '../db/index.ts';
import { sql } from 'kysely';
import { lookupExternalIds } from '../import/repository.ts';
import type { Page } from '../lib/paging.ts';
import type { EntityRelationshipsTable, RecordsTable } from './tables.ts';

export type RecordRow = RecordsTable;

/** Records of one type in one workspace, newest first (docs/pages.md); partition values: [workspaceId, type]. */
export const RECORDS = defineRank({ name: 'records', table: 'records', by: ['workspace_id', 'kind'], ts: 'created_at', id: 'id', appends: true });

/** Relationship values of several records: record id → key → ids. */
export type RelationshipValues = Map<string, Map<string, string[]>>;

function push(out: RelationshipValues, id: string, key: string, value: string): void {
  let byKey = out.get(id);
  if (!byKey) out.set(id, (byKey = new Map<string, string[]>()));
  const values = byKey.get(key);
  if (values) values.push(value);
  else byKey.set(key, [value]);
}

// Workspace and type are compared in code: see repository.ts on the primary-key probe.
export async function findRecord(db: Executor, workspaceId: string, kind: string, id: string): Promise<RecordRow | undefined> {
  const row = await db.selectFrom('records').selectAll().where('id', '=', id).executeTakeFirst();
  return row && row.workspace_id === workspaceId && row.kind === kind ? row : undefined;
}

/**
 * The record an update changes, locked for it: a delete that took it first is waited for, and it is
 * then gone (docs/trash.md §A record in the trash is gone from the live tables); another update of
 * it is waited for, and its fields and relationships are then read as that one left them, so that
 * neither writes back over the other (docs/records.md §Concurrent writes).
 */
export async function findRecordToChange(tx: Executor, workspaceId: string, kind: string, id: string): Promise<RecordRow | undefined> {
  const row = await lockedForChange(tx, tx.selectFrom('records').selectAll().where('id', '=', id)).executeTakeFirst();
  return row && row.workspace_id === workspaceId && row.kind === kind ? row : undefined;
}

// The record's own relationship rows come with it as one JSON array of [name, target] pairs in
// their order, so that the retrieve reads the record, the version and the rows in one statement
// (docs/performance.md §Record reads and writes).
const ownRowsOf = (db: Executor) =>
  sql<
    string | null
  >`(select ${jsonArraysAgg(db, [sql`e.name`, sql`e.target_id`], sql`e.name, e.position`)} from entity_relationships as e where e.source_id = r.id)`;

// The rows of other records' relationships that point at the record come with it too, as one JSON
// array of [name, source, source's type] in the order an inverse relationship shows its records
// (the source's creation, then its id), so that a retrieve reads them in the same statement rather
// than in one of their own; which of them a type shows, and under which key, its definitions say
// (`inverseValues`).
const inverseRowsOf = (db: Executor) =>
  sql<
    string | null
  >`(select ${jsonArraysAgg(db, [sql`e.name`, sql`e.source_id`, sql`s.kind`], sql`s.created_at, e.source_id`)} from entity_relationships as e inner join records as s on s.id = e.source_id where e.target_id = r.id)`;

const recordWithVersionOf = (db: Executor) =>
  db
    .selectFrom('records as r')
    .selectAll('r')
    .select((eb) => eb.selectFrom('definition_versions as v').select('v.version').whereRef('v.workspace_id', '=', 'r.workspace_id').as('defs_version'))
    .select(ownRowsOf(db).as('own_rows'))
    .select(inverseRowsOf(db).as('inverse_rows'));

// The records asked for in one turn are read together (src/db/keyed.ts).
const recordById = keyedRead({ select: recordWithVersionOf, key: 'r.id', keyOf: (row) => row.id });

/** Records of several ids with their workspace's definitions version and their own relationship rows. */
export interface RecordsWithVersion {
  rows: Map<string, RecordRow>;
  /** Undefined when no record was found: the statement's rows carry it. */
  defsVersion: number | undefined;
  own: RelationshipValues;
  /** The rows pointing at each record, as read: [name, source id, source's type] (`inverseValues`). */
  inverse: Map<string, InverseRow[]>;
}

export type InverseRow = [name: string, sourceId: string, sourceKind: string];

/**
 * The records of `ids` of this kind in this workspace, the definitions version and their own
 * relationship rows, in one statement (one snapshot): a page's records (docs/pages.md §Round trips
 * of a page). Outside a transaction the ids join the turn's gathered point reads.
 */
export async function recordsWithVersion(db: Executor, workspaceId: string, kind: string, ids: readonly string[]): Promise<RecordsWithVersion> {
  const found = await recordById.many(db, ids);
  const out: RecordsWithVersion = { rows: new Map(), defsVersion: undefined, own: new Map(), inverse: new Map() };
  for (const { defs_version, own_rows, inverse_rows, ...row } of found) {
    if (row.workspace_id !== workspaceId) continue;
    out.defsVersion = Number(defs_version ?? 0);
    if (row.kind !== kind) continue;
    out.rows.set(row.id, row);
    for (const [name, target] of JSON.parse(own_rows ?? '[]') as [string, string][]) push(out.own, row.id, name, target);
    out.inverse.set(row.id, JSON.parse(inverse_rows ?? '[]') as InverseRow[]);
  }
  return out;
}

const RECORD_COLUMNS = ['id', 'workspace_id', 'kind', 'external_id', 'fields', 'created_at', 'updated_at'] as const;

/** Inserts a record and ranks it, the partition locked first so that concurrent creates keep the counts right. */
export async function insertRecord(tx: Tx, row: RecordRow): Promise<void> {
  await insertRows(tx, 'records', RECORD_COLUMNS, [row], 1);
  await rankInsert(tx, RECORDS, [row.workspace_id, row.kind], [{ ts: row.created_at, id: row.id }]);
}

/** 'insert' lets creates run side by side (docs/pages.md §Creates that only insert); checks of unique values need 'write'. */
export function lockRecords(tx: Tx, workspaceId: string, kind: string, mode: LockMode = 'write'): Promise<void> {
  return lockPartition(tx, RECORDS, [workspaceId, kind], mode);
}

export async function updateRecord(tx: Executor, id: string, set: { fields?: string; external_id?: string; updated_at: string }): Promise<void> {
  await tx.updateTable('records').set(set).where('id', '=', id).execute();
}

/**
 * Moves updatedAt of the other end of a two-sided link (docs/records.md §Writing relationships) to
 * `at`, or leaves it where a write that committed first put it later (§Times of writes): the
 * comparison runs in the statement, under the row's lock. Stored times order as text.
 */
export async function touchRecords(tx: Executor, ids: readonly string[], at: string): Promise<void> {
  const later = sql<string>`case when updated_at > ${at} then updated_at else ${at} end`;
  for (const part of chunks([...ids])) await tx.updateTable('records').set({ updated_at: later }).where('id', 'in', part).execute();
}

/** The ids of a page of the type's records, newest first, and their number (docs/pages.md). */
export async function pageRecordIds(db: Executor, workspaceId: string, kind: string, page: Page): Promise<{ total: number; ids: string[] }> {
  const { total, rows } = await rankPage(db, RECORDS, [workspaceId, kind], page);
  return { total, ids: rows.map((r) => r.id) };
}

/** The own relationship rows of `ids`, by source and key, in their order. */
export async function ownRelationships(db: Executor, ids: readonly string[]): Promise<RelationshipValues> {
  const out: RelationshipValues = new Map();
  for (const part of chunks([...ids])) {
    const rows = await db
      .selectFrom('entity_relationships')
      .select(['source_id', 'name', 'target_id'])
      .where('source_id', 'in', part)
      .orderBy('source_id')
      .orderBy('name')
      .orderBy('position')
      .execute();
    for (const r of rows) push(out, r.source_id, r.name, r.target_id);
  }
  return out;
}

/**
 * The rows of other types' relationships that point at `ids`, through the (target_id, name)
 * index: `pairs` maps "<source type>/<name>" to the key it is seen under here. The source's type
 * is checked by joining its record, because several types use one name (`$account`).
 */
export async function inverseRelationships(db: Executor, ids: readonly string[], pairs: ReadonlyMap<string, string>): Promise<RelationshipValues> {
  const out: RelationshipValues = new Map();
  if (pairs.size === 0) return out;
  const names = [...new Set([...pairs.keys()].map((p) => p.slice(p.indexOf('/') + 1)))];
  for (const part of chunks([...ids])) {
    const rows = await db
      .selectFrom('entity_relationships as r')
      .innerJoin('records as s', 's.id', 'r.source_id')
      .select(['r.target_id', 'r.name', 'r.source_id', 's.kind'])
      .where('r.target_id', 'in', part)
      .where('r.name', 'in', names)
      .orderBy('r.target_id')
      .orderBy('s.created_at')
      .orderBy('r.source_id')
      .execute();
    for (const r of rows) {
      const key = pairs.get(`${r.kind}/${r.name}`);
      if (key) push(out, r.target_id, key, r.source_id);
    }
  }
  return out;
}

/** The inverse relationship values of rows read with their records: `pairs` as in `inverseRelationships`. */
export function inverseValues(read: ReadonlyMap<string, readonly InverseRow[]>, pairs: ReadonlyMap<string, string>): RelationshipValues {
  const out: RelationshipValues = new Map();
  for (const [id, rows] of read)
    for (const [name, source, kind] of rows) {
      const key = pairs.get(`${kind}/${name}`);
      if (key) push(out, id, key, source);
    }
  return out;
}

/** Replaces the own rows of one relationship of one record by `targets`, in order. */
export async function replaceOwn(tx: Executor, sourceId: string, name: string, objectType: string, targets: readonly string[]): Promise<void> {
  await tx.deleteFrom('entity_relationships').where('source_id', '=', sourceId).where('name', '=', name).execute();
  for (const part of chunks(
    targets.map((target_id, position) => ({ source_id: sourceId, name, object_type: objectType, target_id, position })),
    1000,
  ))
    await tx.insertInto('entity_relationships').values(part).execute();
}

/**
 * Links or unlinks sources to one target through the sources' own rows (`name`), appended after
 * their others. The sources to add are locked by the caller (existingRecords `forChange`); those to
 * remove are locked here first, so that an update of one that commits meanwhile is waited for and
 * its rows are then seen by the delete (docs/records.md §Concurrent writes).
 */
export async function linkFromSources(
  tx: Executor,
  targetId: string,
  targetType: string,
  name: string,
  add: readonly string[],
  remove: readonly string[],
): Promise<void> {
  for (const part of chunks([...remove])) {
    await lockedForChange(tx, tx.selectFrom('records').select('id').where('id', 'in', part)).execute();
    await tx.deleteFrom('entity_relationships').where('target_id', '=', targetId).where('name', '=', name).where('source_id', 'in', part).execute();
  }
  for (const part of chunks([...add])) {
    const last = await lastPositions(tx, name, part);
    await tx
      .insertInto('entity_relationships')
      .values(part.map((source_id) => ({ source_id, name, object_type: targetType, target_id: targetId, position: (last.get(source_id) ?? -1) + 1 })))
      .execute();
  }
}

/**
 * Which of `ids` are records of `kind` in the workspace. `forChange`: the write goes on to change
 * their own relationship rows (the contacts an account's `$contact` links), so they are locked as
 * an update of them locks them (findRecordToChange).
 */
export async function existingRecords(
  db: Executor,
  workspaceId: string,
  kind: string,
  ids: readonly string[],
  opts: { forChange?: boolean } = {},
): Promise<Set<string>> {
  const found = new Set<string>();
  const lock = opts.forChange ? lockedForChange : lockedAgainstDelete;
  for (const part of chunks([...ids])) {
    // In a write on PostgreSQL the rows found stay locked against deletion until it commits, so a
    // record moved to the trash meanwhile cannot be left linked (docs/trash.md).
    const rows = await lock(db, db.selectFrom('records').select(['id', 'workspace_id', 'kind']).where('id', 'in', part)).execute();
    for (const r of rows) if (r.workspace_id === workspaceId && r.kind === kind) found.add(r.id);
  }
  return found;
}

/**
 * The record, locked for a delete where rows lock (PostgreSQL, in a transaction): a second delete
 * of it waits here until the first one commits, then finds it gone. Deletes take the listing's lock
 * shared (docs/pages.md §Creates that only insert), so this is what makes them take turns.
 */
export async function findRecordToDelete(tx: Executor, workspaceId: string, kind: string, id: string): Promise<RecordRow | undefined> {
  const row = await lockedForUpdate(tx, tx.selectFrom('records').selectAll().where('id', '=', id)).executeTakeFirst();
  return row && row.workspace_id === workspaceId && row.kind === kind ? row : undefined;
}

/**
 * Takes a record's row out of its table and its listing (the trash, a merge's duplicate). Its
 * listing is taken for inserts, where a delete counts as a delta, unless the caller took it for
 * writes (a merge).
 */
export async function deleteRecord(tx: Tx, row: RecordRow): Promise<void> {
  await lockRecords(tx, row.workspace_id, row.kind, 'insert');
  await deferred(tx, tx.deleteFrom('records').where('id', '=', row.id));
  await rankDelete(tx, RECORDS, [row.workspace_id, row.kind], [{ ts: row.created_at, id: row.id }]);
}

/**
 * Which of `externalIds` (at most a chunk, src/db/chunks.ts) a live record of the kind holds: a
 * restore of a record holding one would collide.
 */
export async function externalIdsTaken(db: Executor, workspaceId: string, kind: string, externalIds: readonly string[]): Promise<Set<string>> {
  if (externalIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('records')
    .select('external_id')
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', kind)
    .where('external_id', 'in', externalIds)
    .execute();
  return new Set(rows.map((r) => r.external_id as string));
}

/**
 * The kinds of the records among `ids` (absent: not a live record). In a write on PostgreSQL the
 * records found stay locked against deletion until it commits: a restore that links to them never
 * leaves a link to a record moved to the trash meanwhile (docs/trash.md §Restore).
 */
export async function kindsOf(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks([...ids]))
    for (const r of await lockedAgainstDelete(db, db.selectFrom('records').select(['id', 'kind']).where('id', 'in', part)).execute()) out.set(r.id, r.kind);
  return out;
}

/**
 * Locks the records among `ids` as an update of each locks it (findRecordToChange), in id order:
 * a writer that appends to their own rows then reads the positions the others left.
 */
export async function lockForChange(tx: Executor, ids: readonly string[]): Promise<void> {
  for (const part of chunks([...new Set(ids)].sort()))
    await lockedForChange(tx, tx.selectFrom('records').select('id').where('id', 'in', part).orderBy('id')).execute();
}

/** The highest position of each source's rows under `name`, to append after them. */
export async function lastPositions(db: Executor, name: string, sourceIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const part of chunks([...sourceIds])) {
    const rows = await db
      .selectFrom('entity_relationships')
      .select(['source_id', (eb) => eb.fn.max('position').as('p')])
      .where('source_id', 'in', part)
      .where('name', '=', name)
      .groupBy('source_id')
      .execute();
    for (const r of rows) out.set(r.source_id, Number(r.p));
  }
  return out;
}

/** Inserts relationship rows as they are (positions free). */
export async function insertRelationshipRows(tx: Tx, rows: readonly RelationshipRow[]): Promise<void> {
  // Nothing reads their answer: sent with the next statement awaited (src/db/pipeline.ts).
  await insertRows(tx, 'entity_relationships', ['source_id', 'name', 'object_type', 'target_id', 'position'], rows, 1000);
}

export type RelationshipRow = EntityRelationshipsTable;

/** Rows of the records table (every workspace): what rebuilding the indexes above costs, roughly. */
export async function recordCount(db: Executor): Promise<number> {
  const r = await sql<{ n: number | string }>`select count(*) as n from records`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Whether the workspace holds any record of `kind`. */
export async function hasRecords(db: Executor, workspaceId: string, kind: string): Promise<boolean> {
  return (await db.selectFrom('records').select('id').where('workspace_id', '=', workspaceId).where('kind', '=', kind).limit(1).execute()).length > 0;
}

export function recordsByExternalId(db: Executor, workspaceId: string, kind: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'records', workspaceId, externalIds, { kind });
}

/**
 * The rows of records by id, in chunks. With `lock` (PostgreSQL, in a transaction) they stay
 * locked until it ends, so that no other writer deletes one meanwhile (the rows an import is
 * about to update): one deleted before this read is missing from the map.
 */
export async function recordRows(db: Executor, ids: readonly string[], opts: { lock?: boolean } = {}): Promise<Map<string, RecordRow>> {
  const out = new Map<string, RecordRow>();
  for (const part of chunks([...ids])) {
    const q = db.selectFrom('records').selectAll().where('id', 'in', part);
    for (const r of await (opts.lock ? lockedForUpdate(db, q) : q).execute()) out.set(r.id, r);
  }
  return out;
}

/** Replaces every relationship of the given sources by `rows` (re-imports replace, never merge). */
export async function replaceRelationships(tx: Tx, sourceIds: string[], rows: RelationshipRow[]): Promise<void> {
  for (const part of chunks(sourceIds)) await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', 'in', part));
  await insertRelationshipRows(tx, rows);
}

type FieldsRow = Pick<RecordRow, 'id' | 'fields'>;

/**
 * The records of a type whose stored values hold custom field `key` (unarchived, or archived and
 * unique): only rows naming it in quotes are read (`holdsText`), and of those the ones that hold it
 * as a key of their fields. `forChange`: locked as an update locks its record (findRecordToChange),
 * so an update under way commits first and is read as it committed.
 */
export async function recordsHolding(db: Executor, workspaceId: string, kind: string, key: string, forChange = false): Promise<FieldsRow[]> {
  const holding = db.selectFrom('records').select(['id', 'fields']).where('workspace_id', '=', workspaceId).where('kind', '=', kind);
  const named = holding.where(holdsText(db, 'fields', `"${key}"`));
  const rows = await (forChange ? lockedForChange(db, named.orderBy('id')) : named).execute();
  return rows.filter((r) => Object.hasOwn(JSON.parse(r.fields) as object, key));
}
