// SQL of the record API (docs/records.md): one record, a ranked page of them, their relationships
// read in batches (own rows by source, inverse rows by target), and the writes of one record.
import { deferred } from '../db/pipeline.ts';
import { batchedRead, jsonKeys, KEYS } from '../db/batched.ts';
import { chunks } from '../db/chunks.ts';
import { sql } from 'kysely';
import { fastReader, prepared } from '../db/prepared.ts';
import { isPostgres } from '../db/dialect.ts';
import { type LockMode, lockScope, rankDelete, rankInsert, rankPage } from '../db/rank.ts';
import type { Executor } from '../db/types.ts';
import { foldText, indexedText } from '../lib/fold.ts';
import type { Page } from '../lib/paging.ts';
import { RECORDS } from './repository.ts';
import type { EntityRelationshipsTable, RecordsTable } from './tables.ts';

export type RecordRow = RecordsTable;

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

// The record's own relationship rows come with it as one JSON array of [name, target] pairs in
// their order, so that the retrieve reads the record, the version and the rows in one statement
// (docs/performance.md §Record reads and writes). Cast to text on PostgreSQL so that both dialects
// hand over the same string.
const ownRowsOf = (db: Executor) =>
  isPostgres(db)
    ? sql<
        string | null
      >`(select json_agg(json_build_array(e.name, e.target_id) order by e.name, e.position)::text from entity_relationships as e where e.source_id = r.id)`
    : sql<
        string | null
      >`(select json_group_array(json_array(e.name, e.target_id) order by e.name, e.position) from entity_relationships as e where e.source_id = r.id)`;

const recordWithVersionOf = (db: Executor) =>
  db
    .selectFrom('records as r')
    .selectAll('r')
    .select((eb) => eb.selectFrom('definition_versions as v').select('v.version').whereRef('v.workspace_id', '=', 'r.workspace_id').as('defs_version'))
    .select(ownRowsOf(db).as('own_rows'));

const recordWithVersion = prepared((db: Executor, id: string) => recordWithVersionOf(db).where('r.id', '=', id));

// The id list bound as one JSON array: one statement text whatever the number of ids.
const recordsWithVersionIn = prepared((db: Executor, idsJson: string) => recordWithVersionOf(db).where('r.id', 'in', jsonKeys(db, idsJson)));

// The records asked for in one turn are read together (src/db/batched.ts).
const recordById = batchedRead<Awaited<ReturnType<typeof recordWithVersion>>[number]>({
  query: (db) => recordWithVersionOf(db).where('r.id', '=', sql<string>`any(${KEYS})`),
  keyOf: (row) => row.id,
  single: (db, id) => recordWithVersion(db, id),
  many: (db, ids) => recordsWithVersionIn(db, JSON.stringify(ids)),
});

/** Records of several ids with their workspace's definitions version and their own relationship rows. */
export interface RecordsWithVersion {
  rows: Map<string, RecordRow>;
  /** Undefined when no record was found: the statement's rows carry it. */
  defsVersion: number | undefined;
  own: RelationshipValues;
}

/**
 * The records of `ids` of this kind in this workspace, the definitions version and their own
 * relationship rows, in one statement (one snapshot): a page's records (docs/pages.md §Round trips
 * of a page). Outside a transaction the ids join the turn's gathered point reads.
 */
export async function recordsWithVersion(db: Executor, workspaceId: string, kind: string, ids: readonly string[]): Promise<RecordsWithVersion> {
  const found = fastReader(db) ? (await Promise.all(ids.map((id) => recordById(db, id)))).flat() : await recordsWithVersionIn(db, JSON.stringify(ids));
  const out: RecordsWithVersion = { rows: new Map(), defsVersion: undefined, own: new Map() };
  for (const { defs_version, own_rows, ...row } of found) {
    if (row.workspace_id !== workspaceId) continue;
    out.defsVersion = Number(defs_version ?? 0);
    if (row.kind !== kind) continue;
    out.rows.set(row.id, row);
    for (const [name, target] of JSON.parse(own_rows ?? '[]') as [string, string][]) push(out.own, row.id, name, target);
  }
  return out;
}

/** Inserts a record and ranks it, the scope locked first so that concurrent creates keep the counts right. */
export async function insertRecord(tx: Executor, row: RecordRow): Promise<void> {
  await deferred(tx, tx.insertInto('records').values(row));
  await rankInsert(tx, RECORDS, [row.workspace_id, row.kind], [{ ts: row.created_at, id: row.id }]);
}

/** 'insert' lets creates run side by side (docs/pages.md §Creates that only insert); checks of unique values need 'write'. */
export function lockRecords(tx: Executor, workspaceId: string, kind: string, mode: LockMode = 'write'): Promise<void> {
  return lockScope(tx, RECORDS, [workspaceId, kind], mode);
}

export async function updateRecord(tx: Executor, id: string, set: { fields?: string; updated_at: string }): Promise<void> {
  await tx.updateTable('records').set(set).where('id', '=', id).execute();
}

/** Moves updatedAt of the other end of a two-sided link (docs/records.md §Writing relationships). */
export async function touchRecords(tx: Executor, ids: readonly string[], at: string): Promise<void> {
  for (const part of chunks([...ids])) await tx.updateTable('records').set({ updated_at: at }).where('id', 'in', part).execute();
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

/** Replaces the own rows of one relationship of one record by `targets`, in order. */
export async function replaceOwn(tx: Executor, sourceId: string, name: string, objectType: string, targets: readonly string[]): Promise<void> {
  await tx.deleteFrom('entity_relationships').where('source_id', '=', sourceId).where('name', '=', name).execute();
  for (const part of chunks(
    targets.map((target_id, position) => ({ source_id: sourceId, name, object_type: objectType, target_id, position })),
    1000,
  ))
    await tx.insertInto('entity_relationships').values(part).execute();
}

/** Links or unlinks sources to one target through the sources' own rows (`name`), appended after their others. */
export async function linkFromSources(
  tx: Executor,
  targetId: string,
  targetType: string,
  name: string,
  add: readonly string[],
  remove: readonly string[],
): Promise<void> {
  for (const part of chunks([...remove]))
    await tx.deleteFrom('entity_relationships').where('target_id', '=', targetId).where('name', '=', name).where('source_id', 'in', part).execute();
  for (const part of chunks([...add])) {
    const last = await tx
      .selectFrom('entity_relationships')
      .select(['source_id', (eb) => eb.fn.max('position').as('p')])
      .where('source_id', 'in', part)
      .where('name', '=', name)
      .groupBy('source_id')
      .execute();
    const next = new Map(last.map((r) => [r.source_id, Number(r.p) + 1]));
    await tx
      .insertInto('entity_relationships')
      .values(part.map((source_id) => ({ source_id, name, object_type: targetType, target_id: targetId, position: next.get(source_id) ?? 0 })))
      .execute();
  }
}

/** Which of `ids` are records of `kind` in the workspace. */
export async function existingRecords(db: Executor, workspaceId: string, kind: string, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks([...ids])) {
    // In a write on PostgreSQL the rows found stay locked against deletion until it commits, so a
    // record moved to the trash meanwhile cannot be left linked (docs/trash.md).
    const rows = await db
      .selectFrom('records')
      .select(['id', 'workspace_id', 'kind'])
      .where('id', 'in', part)
      .$if(db.isTransaction && isPostgres(db), (q) => q.forKeyShare())
      .execute();
    for (const r of rows) if (r.workspace_id === workspaceId && r.kind === kind) found.add(r.id);
  }
  return found;
}

/** Whether another record of the type holds this value of a field (unique fields), through the value index. */
export async function valueTaken(db: Executor, workspaceId: string, kind: string, field: string, value: unknown, exceptId: string): Promise<boolean> {
  let q = db.selectFrom('record_values').select('record_id').where('workspace_id', '=', workspaceId).where('object_type', '=', kind).where('field', '=', field);
  if (typeof value === 'string') q = q.where('value_text', '=', indexedText(foldText(value)));
  else if (typeof value === 'number' || typeof value === 'boolean') q = q.where('value_num', '=', Number(value));
  else return false;
  const row = await q.where('record_id', '!=', exceptId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Takes a record's row out of its table and its listing (the trash, a merge's duplicate). */
export async function deleteRecord(tx: Executor, row: RecordRow): Promise<void> {
  await lockRecords(tx, row.workspace_id, row.kind);
  await tx.deleteFrom('records').where('id', '=', row.id).execute();
  await rankDelete(tx, RECORDS, [row.workspace_id, row.kind], [{ ts: row.created_at, id: row.id }]);
}

/** Whether another record of the kind holds this externalId (a restore would collide). */
export async function externalIdTaken(db: Executor, workspaceId: string, kind: string, externalId: string): Promise<boolean> {
  const r = await db
    .selectFrom('records')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', kind)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return r !== undefined;
}

/** The kinds of the records among `ids` (absent: not a live record). */
export async function kindsOf(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks([...ids]))
    for (const r of await db.selectFrom('records').select(['id', 'kind']).where('id', 'in', part).execute()) out.set(r.id, r.kind);
  return out;
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
export async function insertRelationshipRows(tx: Executor, rows: readonly RelationshipRow[]): Promise<void> {
  for (const part of chunks([...rows], 1000)) await tx.insertInto('entity_relationships').values(part).execute();
}

export type RelationshipRow = EntityRelationshipsTable;
