// SQL of records and their relationships: the reads behind list memberships and the writes of
// import.
import { deferred } from '../db/pipeline.ts';
import { sql } from 'kysely';
import { chunks } from '../db/chunks.ts';
import { insertRows } from '../db/insert-rows.ts';
import { defineRank } from '../db/rank.ts';
import { isPostgres } from '../db/dialect.ts';
import type { Executor } from '../db/types.ts';
import type { TypeDefinitions } from '../definitions/service.ts';
import { replaceTrigrams, withPackedPostings } from '../filters/repository.ts';
import { lookupExternalIds } from '../import/repository.ts';
import { foldText } from '../lib/fold.ts';
import type { EntityRelationshipsTable, RecordValuesTable, RecordsTable } from './tables.ts';

export type RecordRow = RecordsTable;

/** Records of one type in one workspace, newest first (docs/pages.md); scope values: [workspaceId, type]. */
export const RECORDS = defineRank({ name: 'records', table: 'records', by: ['workspace_id', 'kind'], ts: 'created_at', id: 'id', appends: true });

/**
 * Rewrites everything that indexes record values: the value index and the trigrams that serve
 * `contains` (docs/filtering.md). The rows of `recordIds` are removed, then `rows` written; `rows`
 * may also hold rows of records created in this transaction, which have none to remove. Every
 * writer of records calls this one function, so no writer can leave filters behind.
 */
export async function writeValueIndex(tx: Executor, defs: TypeDefinitions, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  // The trigrams first: they read the old values to know which postings to remove.
  await replaceTrigrams(tx, defs, recordIds, rows);
  await replaceValues(tx, recordIds, rows);
}

/** Replaces the value-index rows of `recordIds` by `rows` (docs/records.md §Value index). */
export async function replaceValues(tx: Executor, recordIds: readonly string[], rows: readonly RecordValuesTable[]): Promise<void> {
  for (const part of chunks([...recordIds])) await deferred(tx, tx.deleteFrom('record_values').where('record_id', 'in', part));
  // 6 values a row.
  await insertRows(tx, 'record_values', ['workspace_id', 'object_type', 'field', 'value_text', 'value_num', 'record_id'], rows, 800);
}

/**
 * The secondary indexes a bulk load builds after its rows (docs/import.md §Speed), those keyed by
 * something other than the new ids: the value table's by value, and the links' by target (a
 * million contacts link to 20,000 accounts). They would take a bulk import's rows all over their
 * B-trees, one page at a time. The value table's third, `record_values_record`, is keyed by
 * record id, and an import's new ids grow (`idSequence`): its rows are appended at the index's
 * end, on the writer thread, while the main thread builds the next batch; built afterwards, it was
 * 6–7 s of the tail, which nothing else overlaps. Nothing in a bulk load's batches reads the links
 * by target: they only insert. The trigram table has no secondary index; its primary key is the
 * table (docs/filtering.md §Indexes).
 */
const DEFERRED_INDEXES = ['record_values_text', 'record_values_num', 'entity_relationships_inverse'];

/**
 * The memory SQLite's sorter may fill before it writes a sorted run, per index build, in KiB.
 * SQLite takes that bound from the connection's cache_size, and only runs past it are sorted on
 * the helper threads (`pragma threads`) while the table is still being read; one run held in
 * memory is sorted on the building thread alone. The text index's entries, many and in no order,
 * sort faster in 64 MB runs on the helpers; the numeric index's, fewer, sort faster as one run
 * under the import's large cache (docs/import.md §Speed).
 */
const SORT_RUNS: Record<string, number | undefined> = { record_values_text: 65_536 };

/**
 * Runs `fn`, the writes of a bulk import that only creates records (so that nothing reads or
 * deletes these tables' rows meanwhile), when `bulk`: its postings are written as packs on both
 * databases (docs/filtering.md §Indexes, Packs), and on SQLite the indexes of DEFERRED_INDEXES are
 * built after its rows (withIndexesDeferred). Otherwise `fn` just runs.
 */
export async function withBulkLoad<T>(tx: Executor, bulk: boolean, fn: () => Promise<T>): Promise<T> {
  if (!bulk) return fn();
  // The last packs are sent before the index builds: behind them, they would hold the import's
  // main thread until every build had run (the writer thread takes a bounded queue).
  return isPostgres(tx) ? withPackedPostings(tx, fn) : withIndexesDeferred(tx, () => withPackedPostings(tx, fn));
}

/**
 * Runs `fn` with DEFERRED_INDEXES dropped, then creates them again with the very statements that
 * made them, in the same transaction: one sorted build instead of millions of scattered inserts.
 * Atomic like any SQLite DDL (a rollback restores them), and other connections keep reading their
 * snapshot, indexes included. SQLite only: PostgreSQL would lock the tables against readers.
 */
async function withIndexesDeferred<T>(tx: Executor, fn: () => Promise<T>): Promise<T> {
  const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'index' and name in (${sql.join(DEFERRED_INDEXES)})`.execute(tx);
  const cache = await sql<{ cache_size: number }>`pragma cache_size`.execute(tx);
  const cacheSize = Number(cache.rows[0]?.cache_size);
  for (const r of rows) await sql`drop index ${sql.id(r.name)}`.execute(tx);
  const out = await fn();
  // Deferred: with the import's writer thread (src/db/sqlite-writer.ts), the next kinds' work is
  // built while the indexes are. The pragmas go out in the same order, between the builds.
  const setCache = (size: number) => deferred(tx, sql.raw(`pragma cache_size = ${Math.trunc(size)}`));
  for (const r of rows) {
    const runs = SORT_RUNS[r.name];
    if (runs !== undefined) await setCache(-runs);
    await deferred(tx, sql.raw(r.sql));
    if (runs !== undefined) await setCache(cacheSize);
  }
  return out;
}

/** Rows of the records table (every workspace): what rebuilding the indexes above costs, roughly. */
export async function recordCount(db: Executor): Promise<number> {
  const r = await sql<{ n: number | string }>`select count(*) as n from records`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Whether the workspace holds any record of `kind`. */
export async function hasRecords(db: Executor, workspaceId: string, kind: string): Promise<boolean> {
  const r = await db.selectFrom('records').select('id').where('workspace_id', '=', workspaceId).where('kind', '=', kind).limit(1).execute();
  return r.length > 0;
}

export type RelationshipRow = EntityRelationshipsTable;

export function recordsByExternalId(db: Executor, workspaceId: string, kind: string, externalIds: string[]): Promise<Map<string, string>> {
  return lookupExternalIds(db, 'records', workspaceId, externalIds, kind);
}

/** Inserts new records and overwrites the fields of existing ones (by workspace, kind and externalId). */
export async function upsertRecords(db: Executor, rows: RecordRow[]): Promise<void> {
  // 7 values a row: 300 rows stay far below SQLite's and PostgreSQL's parameter limits.
  for (const part of chunks(rows, 300)) {
    await db
      .insertInto('records')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'kind', 'external_id']).doUpdateSet({ fields: sql`excluded.fields`, updated_at: sql`excluded.updated_at` }),
      )
      .execute();
  }
}

/** Inserts records known to be new (a bulk load's: docs/import.md §Speed) without Kysely's per-value building. */
export async function insertRecords(db: Executor, rows: RecordRow[]): Promise<void> {
  // 7 values a row.
  await insertRows(db, 'records', ['id', 'workspace_id', 'kind', 'external_id', 'fields', 'created_at', 'updated_at'], rows, 1000);
}

/** Replaces every relationship of the given sources by `rows` (re-imports replace, never merge). */
export async function replaceRelationships(tx: Executor, sourceIds: string[], rows: RelationshipRow[]): Promise<void> {
  for (const part of chunks(sourceIds)) await deferred(tx, tx.deleteFrom('entity_relationships').where('source_id', 'in', part));
  // 5 values a row.
  await insertRows(tx, 'entity_relationships', ['source_id', 'name', 'object_type', 'target_id', 'position'], rows, 1000);
}

/**
 * The contacts of the workspace whose `$email` holds one of `emails`, ignoring case, by folded
 * address (docs/records.md §Value index). Meetings and emails derive their `$contact` with it.
 */
export async function contactIdsByEmails(db: Executor, workspaceId: string, emails: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const folded = [...new Set(emails.map(foldText))];
  for (const part of chunks(folded)) {
    const rows = await db
      .selectFrom('record_values')
      .select(['value_text', 'record_id'])
      .where('workspace_id', '=', workspaceId)
      .where('object_type', '=', 'contact')
      .where('field', '=', '$email')
      .where('value_text', 'in', part)
      .orderBy('record_id')
      .execute();
    for (const r of rows) {
      const key = r.value_text as string;
      const ids = out.get(key) ?? [];
      if (!ids.includes(r.record_id)) ids.push(r.record_id);
      out.set(key, ids);
    }
  }
  return out;
}
